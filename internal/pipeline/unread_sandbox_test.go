package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/policy"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// A wave's first notice for a node Drainpipe never touched cordons it in
// one request: a read before the write doubled the round trips of every
// cordon in the control plane's busiest second. The node is held as on
// the read path. A node that is not as expected (here: left to Karpenter)
// is found and read as before, and left alone.
func TestFirstNoticeCordonsInOneRequest(t *testing.T) {
	s := newLiveScene(t, Config{SkipKarpenter: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, id := s.node(ctx, fixture.NodeOptions{})
	s.sent.Take()
	if r := act(t, ctx, s, id, policy.ActionCordon, 1, spot(s.clock.Now())); r.Status != handler.StatusDone {
		t.Fatalf("spot warning: %+v", r)
	}
	if diff := cmp.Diff([]string{"PATCH /api/v1/nodes/" + n.Name}, s.sent.Take()); diff != "" {
		t.Errorf("requests for the cordon (-want +got):\n%s", diff)
	}
	if m := s.get(ctx, t, n.Name); !m.Cordoned || !m.Tainted || m.Kind != string(event.KindSpotInterruption) || !m.Held() {
		t.Errorf("node after the cordon: %+v, want cordoned, tainted and held for the Spot warning", m)
	}

	k, kid := s.node(ctx, fixture.NodeOptions{Labels: map[string]string{drain.KarpenterNodePoolLabel: "default"}})
	s.sent.Take()
	r := act(t, ctx, s, kid, policy.ActionCordon, 1, spot(s.clock.Now()))
	if r.Status != handler.StatusIgnored || !strings.Contains(r.Reason, "Karpenter") {
		t.Errorf("spot warning for a Karpenter node: {%s %q}, want left to Karpenter", statusName(r.Status), r.Reason)
	}
	want := []string{"PATCH /api/v1/nodes/" + k.Name, "GET /api/v1/nodes/" + k.Name}
	if diff := cmp.Diff(want, s.sent.Take()); diff != "" {
		t.Errorf("requests for the Karpenter node (-want +got):\n%s", diff)
	}
	if m := s.get(ctx, t, k.Name); m.Cordoned || m.Held() {
		t.Errorf("Karpenter node touched: %+v", m)
	}
}
