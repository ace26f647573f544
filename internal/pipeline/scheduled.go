package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
)

// scheduledActed says, for a scheduled change whose EC2 event code is
// known, whether the node already records that event as acted on (the
// sweep found it first, or an earlier notice): then it is not acted on
// twice.
func scheduledActed(ctx context.Context, client kubernetes.Interface, name string, p event.Interruption) (string, error) {
	if p.Kind != event.KindScheduledChange || p.ScheduledCode == "" || p.Deadline.IsZero() {
		return "", nil
	}
	node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("getting node %s: %w", name, err)
	}
	if drain.Acted(node, p.ScheduledCode, p.Deadline) {
		return fmt.Sprintf("scheduled event %s from %s already acted on for node %s (%s): not acted on twice",
			p.ScheduledCode, p.Deadline.UTC().Format(time.RFC3339), name, drain.AnnotationActed), nil
	}
	return "", nil
}

// recordScheduled records a finished scheduled-change drain on the node,
// so the other source of the same event (the sweep, or a Health notice)
// leaves it. A failure is logged: at worst the event is acted on again,
// which a finished drain makes a no-op.
func (a *Actor) recordScheduled(ctx context.Context, client kubernetes.Interface, node string, p event.Interruption, log *slog.Logger) {
	if p.Kind != event.KindScheduledChange || p.ScheduledCode == "" || p.Deadline.IsZero() || a.cfg.DryRun {
		return
	}
	if err := drain.RecordActed(ctx, client, node, drain.ScheduledKey(p.ScheduledCode, p.Deadline)); err != nil {
		log.Warn("recording the scheduled event acted on", "error", err.Error())
	}
}
