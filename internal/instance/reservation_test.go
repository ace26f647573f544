package instance

import (
	"errors"
	"slices"
	"testing"

	"github.com/drainpipe/drainpipe/internal/awserr"
	"github.com/drainpipe/drainpipe/test/awsfake"
)

func TestInReservation(t *testing.T) {
	l, fake := newLookup(t, []string{"blue"}, "")
	blue := map[string]string{"eks:cluster-name": "blue"}
	fake.AddInstances(
		awsfake.Instance{ID: "i-0000000000000000a", CapacityReservationID: "cr-0123456789abcdef0", Tags: blue},
		awsfake.Instance{ID: "i-0000000000000000b", CapacityReservationID: "cr-0123456789abcdef1", Tags: blue},
		awsfake.Instance{ID: "i-0000000000000000c", CapacityReservationID: "cr-0123456789abcdef0", Tags: blue},
		awsfake.Instance{ID: "i-0000000000000000d", Tags: blue},
	)
	got, err := l.InReservation(ctx(t), "cr-0123456789abcdef0")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for id, inst := range got {
		if inst.Cluster != "blue" {
			t.Errorf("%s routed to %q, want blue", id, inst.Cluster)
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if want := []string{"i-0000000000000000a", "i-0000000000000000c"}; !slices.Equal(ids, want) {
		t.Errorf("instances = %v, want %v", ids, want)
	}
	calls := fake.CallsTo("DescribeInstances")
	if len(calls) != 1 || calls[0].Params.Get("Filter.1.Name") != "capacity-reservation-id" {
		t.Errorf("calls = %+v, want one capacity-reservation-id filter", calls)
	}

	if _, err := l.InReservation(ctx(t), "i-0000000000000000a"); err == nil {
		t.Error("InReservation(an instance id) succeeded, want an error")
	}
	fake.Inject("DescribeInstances", awsfake.AccessDenied, 1)
	if _, err := l.InReservation(ctx(t), "cr-0123456789abcdef0"); !errors.Is(err, awserr.ErrAccessDenied) {
		t.Errorf("denied: err = %v, want ErrAccessDenied", err)
	}
}
