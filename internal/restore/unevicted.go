package restore

import (
	"context"
	"fmt"
	"log/slog"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
)

// Unevicted gives back the node Drainpipe cordoned for p when every
// lifecycle action of its task turned out over before any eviction (its
// cordon, taint and marks undone), and says what became of it. A node a
// drain already reached stays as that drain left it. A failure is logged
// and the node stays cordoned: the action is over either way.
func Unevicted(ctx context.Context, client kubernetes.Interface, node string, p event.Interruption, log *slog.Logger) string {
	read, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err == nil {
		if _, drained := drain.ReadSummary(read); drained {
			// A drain reached its evictions under this hold (a duplicate
			// delivery that found the action pending, then completed it):
			// the instance is going, the node stays as that drain left it.
			return fmt.Sprintf("node %s stays held: a drain of it already ran", node)
		}
	}
	var g drain.Given
	if err == nil {
		g, err = drain.UncordonRead(ctx, client, read, drain.Match{Kinds: []string{string(p.Kind)}, EventID: p.EventID})
	}
	switch {
	case err != nil && apierrors.IsNotFound(err):
		return fmt.Sprintf("node %s is gone", node)
	case err != nil:
		log.Error("lifecycle action no longer active, but its node could not be given back", "error", err)
		return fmt.Sprintf("giving node %s back failed, it stays cordoned: %v", node, err)
	case g.Back:
		log.Info("lifecycle action no longer active: node given back before any eviction", "changed", g.Changed)
		return fmt.Sprintf("gave node %s back before any eviction: undid %v", node, g.Changed)
	}
	return fmt.Sprintf("node %s left as it is: %s", node, g.Reason)
}
