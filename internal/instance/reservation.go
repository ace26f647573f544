package instance

import (
	"context"
	"fmt"
	"regexp"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

var validReservationID = regexp.MustCompile(`^cr-[0-9a-f]{8}([0-9a-f]{9})?$`)

// InReservation returns the instances running in Capacity Reservation (or
// Block) id, keyed by ID and routed like Describe's: a Capacity Block
// expiry names only its reservation. It is one DescribeInstances with a
// capacity-reservation-id filter, paged.
func (l *Lookup) InReservation(ctx context.Context, id string) (map[string]Instance, error) {
	if !validReservationID.MatchString(id) {
		return nil, fmt.Errorf("malformed capacity reservation id %q", id)
	}
	in := &ec2.DescribeInstancesInput{
		Filters:    []types.Filter{{Name: aws.String("capacity-reservation-id"), Values: []string{id}}},
		MaxResults: aws.Int32(pageSize),
	}
	out := map[string]Instance{}
	if err := l.collect(ctx, in, out); err != nil {
		return nil, fmt.Errorf("describing instances in %s: %w", id, err)
	}
	return out, nil
}
