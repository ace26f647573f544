package instance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/awserr"
	"github.com/drainpipe/drainpipe/test/awsfake"
)

func newLookup(t *testing.T, clusters []string, tag string) (*Lookup, *awsfake.Server) {
	t.Helper()
	fake := awsfake.New()
	t.Cleanup(fake.Close)
	r, err := NewRouter(clusters, tag)
	if err != nil {
		t.Fatal(err)
	}
	return NewLookup(ec2.NewFromConfig(fake.Config()), r), fake
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestDescribeBatchAndRouting(t *testing.T) {
	l, fake := newLookup(t, []string{"blue", "green"}, "")
	launch := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	fake.AddInstances(
		awsfake.Instance{ID: "i-0000000000000000a", PrivateDNSName: "ip-10-0-1-10.us-west-2.compute.internal",
			AvailabilityZone: "us-west-2b", LaunchTime: launch, Tags: map[string]string{"eks:cluster-name": "blue"}},
		awsfake.Instance{ID: "i-0000000000000000b", State: "shutting-down", Lifecycle: "spot", Tags: map[string]string{"kubernetes.io/cluster/green": "owned"}},
		awsfake.Instance{ID: "i-0000000000000000c", Tags: map[string]string{"eks:cluster-name": "red"}},
		awsfake.Instance{ID: "i-0000000000000000d"},
	)
	ids := []string{"i-0000000000000000a", "i-0000000000000000b", "i-0000000000000000c",
		"i-0000000000000000e" /* unknown */, "not-an-instance", "i-0000000000000000a" /* duplicate */}

	got, err := l.Describe(ctx(t), ids)
	if err != nil {
		t.Fatal(err)
	}

	want := map[string]Instance{
		"i-0000000000000000a": {ID: "i-0000000000000000a", State: "running", PrivateDNSName: "ip-10-0-1-10.us-west-2.compute.internal",
			AvailabilityZone: "us-west-2b", Cluster: "blue", LaunchTime: launch, Tags: map[string]string{"eks:cluster-name": "blue"}},
		"i-0000000000000000b": {ID: "i-0000000000000000b", State: "shutting-down", AvailabilityZone: "us-west-2a", Cluster: "green", Lifecycle: "spot",
			Tags: map[string]string{"kubernetes.io/cluster/green": "owned"}},
		"i-0000000000000000c": {ID: "i-0000000000000000c", State: "running", AvailabilityZone: "us-west-2a",
			Tags: map[string]string{"eks:cluster-name": "red"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Describe() mismatch (-want +got):\n%s", diff)
	}
	calls := fake.CallsTo("DescribeInstances")
	if len(calls) != 1 {
		t.Fatalf("DescribeInstances calls = %d, want 1 for the whole batch", len(calls))
	}
	p := calls[0].Params
	if p.Get("Filter.1.Name") != "instance-id" || p.Has("InstanceId.1") {
		t.Errorf("request params = %v, want an instance-id filter and no InstanceId list", p)
	}
	if !p.Has("Filter.1.Value.4") || p.Has("Filter.1.Value.5") {
		t.Errorf("filter values = %v, want the 4 distinct well-formed IDs", p)
	}
	if !calls[0].Signed {
		t.Error("request was not SigV4-signed")
	}

	routes := map[string]Reason{}
	for _, id := range []string{"i-0000000000000000a", "i-0000000000000000c", "i-0000000000000000e"} {
		_, routes[id] = l.Router().Route(got, id)
	}
	wantRoutes := map[string]Reason{"i-0000000000000000a": "", "i-0000000000000000c": ReasonForeignCluster, "i-0000000000000000e": ReasonNotFound}
	if diff := cmp.Diff(wantRoutes, routes); diff != "" {
		t.Errorf("Route reasons mismatch (-want +got):\n%s", diff)
	}
}

func TestDescribeChunks(t *testing.T) {
	l, fake := newLookup(t, []string{"blue"}, "")
	var ids []string
	for i := range 450 {
		id := fmt.Sprintf("i-%017x", i)
		ids = append(ids, id)
		fake.AddInstances(awsfake.Instance{ID: id})
	}
	got, err := l.Describe(ctx(t), ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 450 {
		t.Errorf("Describe() returned %d instances, want 450", len(got))
	}
	if n := len(fake.CallsTo("DescribeInstances")); n != 3 {
		t.Errorf("DescribeInstances calls = %d, want 3 (chunks of %d)", n, maxFilterValues)
	}
}

func TestDescribeErrors(t *testing.T) {
	tests := []struct {
		name      string
		fault     awsfake.Fault
		times     int
		wantClass error // nil: success
		wantCalls int
	}{
		{"throttled twice then served", awsfake.Throttle, 2, nil, 3},
		{"throttled past the retry budget", awsfake.Throttle, -1, awserr.ErrThrottled, 3},
		{"access denied is not retried", awsfake.AccessDenied, 1, awserr.ErrAccessDenied, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, fake := newLookup(t, []string{"blue"}, "")
			fake.AddInstances(awsfake.Instance{ID: "i-0000000000000000a"})
			fake.Inject("DescribeInstances", tt.fault, tt.times)

			got, err := l.Describe(ctx(t), []string{"i-0000000000000000a"})

			if tt.wantClass == nil && err != nil {
				t.Fatalf("Describe() error = %v, want nil", err)
			}
			// Its callers say what they describe ("describing 1 instances"); said here too it was said twice.
			if err != nil && strings.HasPrefix(err.Error(), "describing") {
				t.Errorf("Describe() error %q says what its callers say", err)
			}
			if class := awserr.Class(err); class != tt.wantClass {
				t.Errorf("Describe() error = %v, class %v; want class %v", err, class, tt.wantClass)
			}
			if tt.wantClass == nil && got["i-0000000000000000a"].Cluster != "blue" {
				t.Errorf("Describe() = %v, want the instance routed to blue", got)
			}
			if n := len(fake.CallsTo("DescribeInstances")); n != tt.wantCalls {
				t.Errorf("DescribeInstances calls = %d, want %d", n, tt.wantCalls)
			}
		})
	}
}

func TestDescribeNothing(t *testing.T) {
	l, fake := newLookup(t, []string{"blue"}, "")
	got, err := l.Describe(ctx(t), []string{"garbage"})
	if err != nil || len(got) != 0 {
		t.Errorf("Describe(garbage) = (%v, %v), want an empty map", got, err)
	}
	if n := len(fake.Calls()); n != 0 {
		t.Errorf("calls = %d, want 0 when no ID is well-formed", n)
	}
	if errors.Is(err, awserr.ErrNotFound) {
		t.Error("unexpected not-found error")
	}
}
