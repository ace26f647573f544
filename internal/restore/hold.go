package restore

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/hold"
)

// RebalanceOnly reports whether a task holds nothing but rebalance
// recommendations: only those are given back after a hold.
func RebalanceOnly(ins []event.Interruption) bool {
	for _, in := range ins {
		if in.Kind != event.KindRebalanceRecommendation {
			return false
		}
	}
	return len(ins) > 0
}

// Overtaken says, on a rebalance redelivery, whether node is now held for
// another threat too (an interruption followed, or a newer
// recommendation): then this message is done. It ends the rebalance's own
// hold (the node stays held for the others) rather than keep it to its
// hold's end: the threat that followed decides when the node comes back.
func Overtaken(ctx context.Context, client kubernetes.Interface, node string, p event.Interruption) (string, error) {
	read, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("getting node %s: %w", node, err)
	}
	own := hold.Key{Kind: string(p.Kind), ID: p.EventID}
	others := slices.DeleteFunc(slices.Clone(drain.ReadMarks(read).Holds), func(h hold.Hold) bool { return h.Key() == own })
	if len(others) == 0 {
		return "", nil
	}
	g, err := drain.UncordonRead(ctx, client, read, drain.Match{Kinds: []string{string(p.Kind)}, EventID: p.EventID})
	if err != nil {
		return "", fmt.Errorf("ending the rebalance hold on node %s: %w", node, err)
	}
	return fmt.Sprintf("node %s is now held for %s too: the rebalance hold of event %s ends here (%s)",
		node, others, p.EventID, g.Reason), nil
}

// Held is a rebalance-only cordon its task has just made or found.
type Held struct {
	Node         string
	Event        event.Interruption // the task's primary interruption
	State        string             // EC2's state of the instance
	ReceiveCount int                // the task's delivery
	Reason       string             // what the task did to the node
}

// Hold keeps a rebalance-only cordon until Config.RebalanceHold has passed
// since the node was first cordoned, by asking for the message back then
// (Result.HoldFor: its visibility timeout). When it comes back and no
// interruption followed, the node is given back if EC2 still reports the
// instance running. On the queue's last delivery the node is given back
// early rather than held for good.
func (s *Restorer) Hold(ctx context.Context, client kubernetes.Interface, h Held, log *slog.Logger) Result {
	name := h.Node
	node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return retry(fmt.Sprintf("getting node %s: %v", name, err))
	}
	since, err := time.Parse(time.RFC3339, drain.ReadMarks(node).Since)
	if err != nil {
		since = h.Event.Time
	}
	now := s.Clock.Now()
	// The mark is written on the drainer's clock, in whole seconds; one
	// ahead of ours (another environment's, a second boundary) must not
	// stretch the hold past RebalanceHold from now.
	if since.After(now) {
		since = now
	}
	end := since.Add(s.cfg.RebalanceHold)
	if h.State != "running" {
		return done(fmt.Sprintf("%s; instance is %s: node %s stays cordoned", h.Reason, h.State, name))
	}
	if now.Before(end) && h.ReceiveCount < s.cfg.MaxReceiveCount {
		return Result{Status: Retry, HoldFor: end.Sub(now), Node: name,
			Reason: fmt.Sprintf("%s; holding the rebalance cordon until %s (DRAINPIPE_REBALANCE_HOLD %s), then giving it back "+
				"if no interruption followed", h.Reason, end.UTC().Format(time.RFC3339), s.cfg.RebalanceHold)}
	}
	if now.Before(end) {
		log.Warn("last delivery before the rebalance hold ends: giving the node back early", "hold_ends", end)
	}
	return s.GiveBack(ctx, client, node, drain.Match{Kinds: []string{string(event.KindRebalanceRecommendation)},
		EventID: h.Event.EventID}, "rebalance hold over, no interruption followed", log)
}
