package pipeline

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/policy"
)

const blockID = "cr-0123456789abcdef0"

func blockTask() handler.Task {
	in := event.Interruption{Kind: event.KindCapacityBlockExpiry, Reservation: blockID, EventID: "block-1",
		Time: t0, Deadline: t0.Add(10 * time.Minute)}
	return handler.Task{Reservation: blockID, Action: policy.ActionCordonAndDrain,
		Interruptions: []event.Interruption{in}, ReceiveCount: 1}
}

// A Capacity Block expiry is expanded to the block's instances with one
// EC2 call, and each instance's node is drained by the block's deadline.
func TestActExpandsCapacityBlock(t *testing.T) {
	a, b := "i-0000000000000000a", "i-0000000000000000b"
	r := newRig(t, rigOpts{
		instances: map[string]instance.Instance{
			a: {ID: a, State: "running", Cluster: "prod"},
			b: {ID: b, State: "running", Cluster: "prod"},
		},
		members: map[string][]string{blockID: {a, b}},
		nodes:   map[string]string{a: "node-a", b: "node-b"},
	})
	res := r.actor.Act(context.Background(), blockTask())
	if res.Status != handler.StatusDone || !strings.Contains(res.Reason, a) || !strings.Contains(res.Reason, b) {
		t.Errorf("result = %+v, want done naming both instances", res)
	}
	var nodes []string
	for _, req := range r.drainer.reqs {
		nodes = append(nodes, req.Node)
		if !req.Evict || req.Kind != string(event.KindCapacityBlockExpiry) || !req.Deadline.Equal(t0.Add(10*time.Minute)) {
			t.Errorf("drain request = %+v", req)
		}
	}
	slices.Sort(nodes)
	if !slices.Equal(nodes, []string{"node-a", "node-b"}) {
		t.Errorf("drained %v, want node-a and node-b", nodes)
	}
	// The reservation lookup answers for its instances: no Describe after it.
	if len(r.instances.calls) != 1 || r.instances.calls[0][0] != blockID {
		t.Errorf("EC2 calls = %v, want one reservation lookup", r.instances.calls)
	}
}

func TestActCapacityBlockOutcomes(t *testing.T) {
	a := "i-0000000000000000a"
	tests := []struct {
		name       string
		opts       rigOpts
		wantStatus handler.Status
		wantReason string
	}{
		{"empty block", rigOpts{members: map[string][]string{}}, handler.StatusIgnored, "no instances"},
		{"lookup fails", rigOpts{describeErr: errBoom}, handler.StatusRetry, "boom"},
		{"one instance fails to drain", rigOpts{
			instances: map[string]instance.Instance{a: {ID: a, State: "running", Cluster: "prod"}},
			members:   map[string][]string{blockID: {a}}, nodes: map[string]string{a: "node-a"}, findErr: errBoom,
		}, handler.StatusRetry, a},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, tt.opts)
			res := r.actor.Act(context.Background(), blockTask())
			if res.Status != tt.wantStatus || !strings.Contains(res.Reason, tt.wantReason) {
				t.Errorf("result = %+v, want status %d with %q", res, tt.wantStatus, tt.wantReason)
			}
		})
	}
}
