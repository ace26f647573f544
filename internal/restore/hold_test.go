package restore

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/hold"
)

var rebalance = event.Interruption{Kind: event.KindRebalanceRecommendation, EventID: "e-reb", Time: t0.Add(-7 * time.Minute)}

// rebalanceHeld is a node held for the recommendation since since ("":
// without the first-seen mark), and for others.
func rebalanceHeld(since string, others ...hold.Hold) *corev1.Node {
	n := heldNode("n1", append([]hold.Hold{held("rebalance-recommendation", "e-reb", rebalance.Time)}, others...)...)
	if since == "" {
		delete(n.Annotations, drain.AnnotationFirstSeen)
	} else {
		n.Annotations[drain.AnnotationFirstSeen] = since
	}
	return n
}

// A rebalance redelivery ends its hold early only when another threat
// holds the node too.
func TestOvertaken(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Config{}, rebalanceHeld(hold.Stamp(t0)))
	if why, err := Overtaken(ctx, f.client, "n1", rebalance); why != "" || err != nil {
		t.Errorf("held for the recommendation alone: %q, %v", why, err)
	}
	if m, _ := marks(t, f.client, "n1"); len(m.Holds) != 1 {
		t.Errorf("holds %v, want the recommendation's", m.Holds)
	}
	spot := held("spot-interruption", "e-spot", t0)
	f = newFixture(t, Config{}, rebalanceHeld(hold.Stamp(t0), spot))
	why, err := Overtaken(ctx, f.client, "n1", rebalance)
	if err != nil || !strings.HasPrefix(why, "node n1 is now held for spot-interruption/e-spot too: the rebalance hold of event e-reb ends here") {
		t.Errorf("held for a Spot warning too: %q, %v", why, err)
	}
	if m, _ := marks(t, f.client, "n1"); len(m.Holds) != 1 || m.Holds[0].Kind != "spot-interruption" {
		t.Errorf("holds %v, want the warning's alone", m.Holds)
	}
	f = newFixture(t, Config{})
	if _, err := Overtaken(ctx, f.client, "n1", rebalance); err == nil || !strings.HasPrefix(err.Error(), "getting node n1") {
		t.Errorf("node gone: %v", err)
	}
	f = newFixture(t, Config{}, rebalanceHeld(hold.Stamp(t0), spot))
	refusePatches(f.client)
	if _, err := Overtaken(ctx, f.client, "n1", rebalance); err == nil ||
		!strings.HasPrefix(err.Error(), "ending the rebalance hold on node n1") {
		t.Errorf("patch refused: %v", err)
	}
}

// Hold keeps a rebalance cordon RebalanceHold from the first cordon (the
// notice's time without the mark, now when the mark is ahead of the
// clock), gives it back then or on the last delivery, and leaves the node
// of an instance no longer running.
func TestHoldRebalance(t *testing.T) {
	cfg := Config{RebalanceHold: 10 * time.Minute, MaxReceiveCount: 3}
	h := Held{Node: "n1", Event: rebalance, State: "running", ReceiveCount: 1, Reason: "cordoned"}
	for _, c := range []struct {
		name    string
		since   string
		mod     func(*Held)
		status  Status
		holdFor time.Duration
		reason  string
	}{
		{"held", hold.Stamp(t0.Add(-4 * time.Minute)), nil, Retry, 6 * time.Minute,
			"cordoned; holding the rebalance cordon until 2026-03-01T12:06:00Z (DRAINPIPE_REBALANCE_HOLD 10m0s), then giving it back"},
		{"no mark", "", nil, Retry, 3 * time.Minute, "cordoned; holding the rebalance cordon until 2026-03-01T12:03:00Z"},
		{"mark ahead", hold.Stamp(t0.Add(30 * time.Second)), nil, Retry, 10 * time.Minute, "cordoned; holding"},
		{"second to last delivery", hold.Stamp(t0), func(h *Held) { h.ReceiveCount = 2 }, Retry, 10 * time.Minute, "cordoned; holding"},
		{"last delivery", hold.Stamp(t0), func(h *Held) { h.ReceiveCount = 3 }, Done, 0,
			"gave node n1 back (rebalance hold over, no interruption followed)"},
		{"hold over", hold.Stamp(t0.Add(-10 * time.Minute)), nil, Done, 0,
			"gave node n1 back (rebalance hold over, no interruption followed)"},
		{"stopped", hold.Stamp(t0), func(h *Held) { h.State = "stopped" }, Done, 0,
			"cordoned; instance is stopped: node n1 stays cordoned"},
	} {
		f := newFixture(t, cfg, rebalanceHeld(c.since))
		h := h
		if c.mod != nil {
			c.mod(&h)
		}
		r := f.r.Hold(context.Background(), f.client, h, f.log)
		if r.Status != c.status || r.HoldFor != c.holdFor || !strings.HasPrefix(r.Reason, c.reason) {
			t.Errorf("%s: %+v, want status %d for %s, %q", c.name, r, c.status, c.holdFor, c.reason)
		}
		if m, _ := marks(t, f.client, "n1"); m.Held() == (c.status == Done && c.name != "stopped") {
			t.Errorf("%s: node held %v", c.name, m.Held())
		}
		if early := strings.Contains(f.logs.String(), "giving the node back early"); early != (c.name == "last delivery") {
			t.Errorf("%s: logged an early give-back %v", c.name, early)
		}
	}
	f := newFixture(t, cfg)
	if r := f.r.Hold(context.Background(), f.client, h, f.log); r.Status != Retry || !strings.HasPrefix(r.Reason, "getting node n1") {
		t.Errorf("node gone: %+v", r)
	}
}

// Unevicted ends the hold its own delivery took, and says what became of
// the node.
func TestUnevicted(t *testing.T) {
	ctx := context.Background()
	hook := event.Interruption{Kind: event.KindASGLifecycle}
	byD1 := held("asg-lifecycle", "tok", t0)
	byD1.By = "d1"
	f := newFixture(t, Config{}, heldNode("n1", byD1))
	if got := Unevicted(ctx, f.client, "n1", hook, "d1", f.log); !strings.HasPrefix(got, "gave node n1 back before any eviction: undid [") {
		t.Errorf("own hold: %q", got)
	}
	f = newFixture(t, Config{}, heldNode("n1", byD1))
	if got := Unevicted(ctx, f.client, "n1", hook, "d0", f.log); !strings.HasPrefix(got, "node n1 left as it is: ") {
		t.Errorf("an earlier delivery's hold: %q", got)
	}
	f = newFixture(t, Config{})
	if got := Unevicted(ctx, f.client, "n1", hook, "d1", f.log); got != "node n1 is gone" {
		t.Errorf("node gone: %q", got)
	}
	f = newFixture(t, Config{}, heldNode("n1", byD1))
	refusePatches(f.client)
	if got := Unevicted(ctx, f.client, "n1", hook, "d1", f.log); !strings.HasPrefix(got, "giving node n1 back failed, it stays cordoned: ") {
		t.Errorf("patch refused: %q", got)
	}
}
