package awsfake

import (
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// The capacity-reservation-id filter finds the instances in a Capacity
// Block, and the answer names each instance's reservation as EC2 does.
func TestEC2CapacityReservationFilter(t *testing.T) {
	s, ctx := setup(t)
	s.AddInstances(
		Instance{ID: "i-0000000000000000a", CapacityReservationID: "cr-0000000000000000a"},
		Instance{ID: "i-0000000000000000b"},
		Instance{ID: "i-0000000000000000c", CapacityReservationID: "cr-0000000000000000a"},
		Instance{ID: "i-0000000000000000d", CapacityReservationID: "cr-0000000000000000b"},
	)
	out, err := ec2.NewFromConfig(s.Config()).DescribeInstances(ctx, &ec2.DescribeInstancesInput{
		Filters: []types.Filter{{Name: aws.String("capacity-reservation-id"), Values: []string{"cr-0000000000000000a"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range out.Reservations {
		for _, i := range r.Instances {
			if aws.ToString(i.CapacityReservationId) != "cr-0000000000000000a" {
				t.Errorf("%s: capacityReservationId = %q", aws.ToString(i.InstanceId), aws.ToString(i.CapacityReservationId))
			}
			got = append(got, aws.ToString(i.InstanceId))
		}
	}
	if want := []string{"i-0000000000000000a", "i-0000000000000000c"}; !slices.Equal(got, want) {
		t.Errorf("instances = %v, want %v", got, want)
	}
}
