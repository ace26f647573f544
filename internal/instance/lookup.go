package instance

import (
	"context"
	"regexp"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/drainpipe/drainpipe/internal/awserr"
)

// EC2 limits: values per filter and results per page.
const (
	maxFilterValues = 200
	pageSize        = 1000
)

// validID matches EC2 instance IDs (8 hex digits for old ones, 17 now).
var validID = regexp.MustCompile(`^i-[0-9a-f]{8}([0-9a-f]{9})?$`)

// ec2API is the part of the EC2 client Lookup uses.
type ec2API interface {
	DescribeInstances(ctx context.Context, in *ec2.DescribeInstancesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error)
}

var _ ec2API = (*ec2.Client)(nil)

// Lookup describes instances and routes them to the configured clusters.
type Lookup struct {
	ec2    ec2API
	router Router
}

// NewLookup returns a Lookup using client (an *ec2.Client).
func NewLookup(client ec2API, router Router) *Lookup {
	return &Lookup{ec2: client, router: router}
}

// Router returns the router Describe assigns clusters with, so callers can
// ask it why an instance was ignored.
func (l *Lookup) Router() Router { return l.router }

// Describe returns the instances with the given IDs, keyed by ID, with
// Cluster set by the router (empty when the instance is ignored). IDs
// that EC2 does not know, or that are not instance IDs at all, are simply
// absent from the map.
//
// It asks with an instance-id filter rather than InstanceIds: with
// InstanceIds, a single unknown or malformed ID fails the whole call
// (InvalidInstanceID.NotFound), while a filter just leaves it out. A batch
// of up to 200 IDs is one call; more are split into calls of 200.
func (l *Lookup) Describe(ctx context.Context, ids []string) (map[string]Instance, error) {
	var wanted []string
	for _, id := range ids {
		if validID.MatchString(id) && !slices.Contains(wanted, id) {
			wanted = append(wanted, id)
		}
	}
	out := make(map[string]Instance, len(wanted))
	for chunk := range slices.Chunk(wanted, maxFilterValues) {
		in := &ec2.DescribeInstancesInput{
			Filters:    []types.Filter{{Name: aws.String("instance-id"), Values: chunk}},
			MaxResults: aws.Int32(pageSize),
		}
		// Its callers say what they described: wrapping here too said it twice.
		if err := l.collect(ctx, in, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// collect pages through in's answer, adding each instance, routed, to out.
func (l *Lookup) collect(ctx context.Context, in *ec2.DescribeInstancesInput, out map[string]Instance) error {
	pages := ec2.NewDescribeInstancesPaginator(l.ec2, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return awserr.Classify(err)
		}
		for _, r := range page.Reservations {
			for _, i := range r.Instances {
				inst := convert(i)
				inst.Cluster, _ = l.router.Cluster(inst)
				out[inst.ID] = inst
			}
		}
	}
	return nil
}

func convert(i types.Instance) Instance {
	inst := Instance{
		ID:             aws.ToString(i.InstanceId),
		PrivateDNSName: aws.ToString(i.PrivateDnsName),
		LaunchTime:     aws.ToTime(i.LaunchTime),
		Tags:           make(map[string]string, len(i.Tags)),
		Lifecycle:      string(i.InstanceLifecycle),
	}
	if i.State != nil {
		inst.State = string(i.State.Name)
	}
	if i.Placement != nil {
		inst.AvailabilityZone = aws.ToString(i.Placement.AvailabilityZone)
	}
	for _, t := range i.Tags {
		inst.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return inst
}
