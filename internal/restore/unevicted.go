package restore

import (
	"context"
	"fmt"
	"log/slog"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
)

// Unevicted ends the holds the delivery by took on node for p's lifecycle
// actions when every action of its task turned out over before any
// eviction, and says what became of the node: given back when no other
// hold stands. A hold an earlier delivery took stays: that delivery acted
// on the action (cordoned only, drained, or completed it) and the
// instance is going; another threat's hold stays too. A failure is logged
// and the node stays cordoned: the action is over either way.
func Unevicted(ctx context.Context, client kubernetes.Interface, node string, p event.Interruption, by string, log *slog.Logger) string {
	g, err := drain.Uncordon(ctx, client, node, drain.Match{Kinds: []string{string(p.Kind)}, By: by})
	if err != nil && apierrors.IsNotFound(err) {
		return fmt.Sprintf("node %s is gone", node)
	}
	if err != nil {
		log.Error("lifecycle action no longer active, but its node could not be given back", "error", err)
		return fmt.Sprintf("giving node %s back failed, it stays cordoned: %v", node, err)
	}
	if g.Back {
		log.Info("lifecycle action no longer active: node given back before any eviction", "changed", g.Changed)
		return fmt.Sprintf("gave node %s back before any eviction: undid %v", node, g.Changed)
	}
	return fmt.Sprintf("node %s left as it is: %s", node, g.Reason)
}
