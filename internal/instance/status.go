package instance

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/drainpipe/drainpipe/internal/awserr"
)

// ScheduledCodes are the EC2 scheduled event codes the sweep asks
// DescribeInstanceStatus for: all of them, so that a node held for a
// maintenance is not given back while it is still listed.
var ScheduledCodes = []string{"instance-stop", "instance-retirement", "instance-reboot", "system-reboot", "system-maintenance"}

// statusAPI is the part of the EC2 client Scheduled uses.
type statusAPI interface {
	DescribeInstanceStatus(ctx context.Context, in *ec2.DescribeInstanceStatusInput, optFns ...func(*ec2.Options)) (*ec2.DescribeInstanceStatusOutput, error)
}

var _ statusAPI = (*ec2.Client)(nil)

// ScheduledEvent is one EC2 scheduled event still to come on an instance.
type ScheduledEvent struct {
	InstanceID string
	// Code is EC2's event code: instance-stop, instance-retirement,
	// instance-reboot, system-reboot or system-maintenance.
	Code string
	// ID is EC2's instance event id (instance-event-...).
	ID          string
	NotBefore   time.Time
	Description string
}

// Scheduled lists the scheduled events of the account's instances in the
// region: DescribeInstanceStatus filtered on event.code, paged. EC2 keeps
// completed and canceled events listed for a while, their description
// prefixed "[Completed]" or "[Canceled]": those are left out. It needs an
// EC2 client that also serves DescribeInstanceStatus.
func (l *Lookup) Scheduled(ctx context.Context) ([]ScheduledEvent, error) {
	api, ok := l.ec2.(statusAPI)
	if !ok {
		return nil, fmt.Errorf("listing scheduled events: the EC2 client cannot describe instance status")
	}
	in := &ec2.DescribeInstanceStatusInput{
		Filters:    []types.Filter{{Name: aws.String("event.code"), Values: ScheduledCodes}},
		MaxResults: aws.Int32(pageSize),
	}
	var out []ScheduledEvent
	pages := ec2.NewDescribeInstanceStatusPaginator(api, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing scheduled events: %w", awserr.Classify(err))
		}
		for _, s := range page.InstanceStatuses {
			for _, e := range s.Events {
				d := aws.ToString(e.Description)
				if strings.HasPrefix(d, "[Completed]") || strings.HasPrefix(d, "[Canceled]") {
					continue
				}
				out = append(out, ScheduledEvent{InstanceID: aws.ToString(s.InstanceId), Code: string(e.Code),
					ID: aws.ToString(e.InstanceEventId), NotBefore: aws.ToTime(e.NotBefore), Description: d})
			}
		}
	}
	return out, nil
}

// Stopped returns the stopped instances tagged for any configured
// cluster, routed like Describe's (an instance whose cluster tag names
// another cluster comes back with Cluster empty): one DescribeInstances
// with instance-state-name and tag-key filters, paged.
func (l *Lookup) Stopped(ctx context.Context) (map[string]Instance, error) {
	in := &ec2.DescribeInstancesInput{
		Filters: []types.Filter{
			{Name: aws.String("instance-state-name"), Values: []string{"stopped"}},
			{Name: aws.String("tag-key"), Values: l.router.tagKeys()},
		},
		MaxResults: aws.Int32(pageSize),
	}
	out := map[string]Instance{}
	if err := l.collect(ctx, in, out); err != nil {
		return nil, fmt.Errorf("describing stopped instances: %w", err)
	}
	return out, nil
}

// tagKeys are the tag keys that can name one of r's clusters.
func (r Router) tagKeys() []string {
	keys := map[string]bool{tagClusterName: true, tagAWSClusterName: true}
	for _, c := range r.clusters {
		keys[tagClusterPrefix+c] = true
	}
	return slices.Sorted(maps.Keys(keys))
}
