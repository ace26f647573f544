package instance

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/awserr"
	"github.com/drainpipe/drainpipe/test/awsfake"
)

func TestScheduledListsActiveEventsPaged(t *testing.T) {
	l, fake := newLookup(t, []string{"blue"}, "")
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i := range 1005 { // two pages of 1000
		fake.AddInstances(awsfake.Instance{ID: fmt.Sprintf("i-%017x", i)})
	}
	fake.AddInstances(awsfake.Instance{ID: "i-0000000000000ffff", State: "stopped"})
	fake.AddScheduledEvents(
		awsfake.ScheduledEvent{InstanceID: "i-00000000000000001", ID: "instance-event-0000000000000001", Code: "instance-retirement",
			Description: "The instance is running on degraded hardware", NotBefore: start},
		awsfake.ScheduledEvent{InstanceID: "i-000000000000003ec", ID: "instance-event-0000000000000002", Code: "system-reboot",
			Description: "scheduled reboot", NotBefore: start},
		awsfake.ScheduledEvent{InstanceID: "i-00000000000000002", ID: "instance-event-0000000000000003", Code: "instance-reboot",
			Description: "[Completed] scheduled reboot", NotBefore: start},
		awsfake.ScheduledEvent{InstanceID: "i-00000000000000003", ID: "instance-event-0000000000000004", Code: "instance-stop",
			Description: "[Canceled] scheduled stop", NotBefore: start},
	)
	got, err := l.Scheduled(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []ScheduledEvent{
		{InstanceID: "i-00000000000000001", Code: "instance-retirement", ID: "instance-event-0000000000000001", NotBefore: start,
			Description: "The instance is running on degraded hardware"},
		{InstanceID: "i-000000000000003ec", Code: "system-reboot", ID: "instance-event-0000000000000002", NotBefore: start,
			Description: "scheduled reboot"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Scheduled() mismatch (-want +got):\n%s", diff)
	}
	calls := fake.CallsTo("DescribeInstanceStatus")
	if len(calls) != 1 { // only 4 instances have events: one page
		t.Errorf("DescribeInstanceStatus calls = %d, want 1", len(calls))
	}
	if p := calls[0].Params; p.Get("Filter.1.Name") != "event.code" || !slices.Equal(indexedValues(p, "Filter.1.Value."), ScheduledCodes) {
		t.Errorf("request = %v, want an event.code filter on %v", p, ScheduledCodes)
	}

	fake.Inject("DescribeInstanceStatus", awsfake.AccessDenied, 1)
	if _, err := l.Scheduled(ctx(t)); !errors.Is(err, awserr.ErrAccessDenied) {
		t.Errorf("denied: err = %v, want ErrAccessDenied", err)
	}
}

func TestScheduledPages(t *testing.T) {
	l, fake := newLookup(t, []string{"blue"}, "")
	for i := range 1003 {
		id := fmt.Sprintf("i-%017x", i)
		fake.AddInstances(awsfake.Instance{ID: id})
		fake.AddScheduledEvents(awsfake.ScheduledEvent{InstanceID: id, ID: fmt.Sprintf("instance-event-%017x", i), Code: "instance-stop"})
	}
	got, err := l.Scheduled(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1003 {
		t.Errorf("Scheduled() = %d events, want 1003", len(got))
	}
	if n := len(fake.CallsTo("DescribeInstanceStatus")); n != 2 {
		t.Errorf("DescribeInstanceStatus calls = %d, want 2 pages", n)
	}
}

func TestStoppedOfServedClusters(t *testing.T) {
	l, fake := newLookup(t, []string{"blue"}, "")
	fake.AddInstances(
		awsfake.Instance{ID: "i-0000000000000000a", State: "stopped", Tags: map[string]string{"eks:cluster-name": "blue"}},
		awsfake.Instance{ID: "i-0000000000000000b", State: "stopped", Tags: map[string]string{"kubernetes.io/cluster/blue": "owned"}},
		awsfake.Instance{ID: "i-0000000000000000c", State: "stopped", Tags: map[string]string{"eks:cluster-name": "red"}},
		awsfake.Instance{ID: "i-0000000000000000d", State: "running", Tags: map[string]string{"eks:cluster-name": "blue"}},
		awsfake.Instance{ID: "i-0000000000000000e", State: "stopped"},
	)
	got, err := l.Stopped(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	routed := map[string]string{}
	for id, inst := range got {
		routed[id] = inst.Cluster
	}
	want := map[string]string{"i-0000000000000000a": "blue", "i-0000000000000000b": "blue", "i-0000000000000000c": ""}
	if diff := cmp.Diff(want, routed); diff != "" {
		t.Errorf("Stopped() clusters mismatch (-want +got):\n%s", diff)
	}
	if n := len(fake.CallsTo("DescribeInstances")); n != 1 {
		t.Errorf("DescribeInstances calls = %d, want 1", n)
	}
}

func indexedValues(p url.Values, prefix string) []string {
	var out []string
	for i := 1; p.Has(fmt.Sprintf("%s%d", prefix, i)); i++ {
		out = append(out, p.Get(fmt.Sprintf("%s%d", prefix, i)))
	}
	return out
}
