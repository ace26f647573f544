package kevents

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"

	"github.com/drainpipe/drainpipe/internal/drain"
)

// CordonUntouched passes an unread cordon through to the wrapped drainer
// (drain.ErrTouched when it cannot: the caller reads the node): the node's
// start event follows the Run that goes on from it.
func (w wrapped) CordonUntouched(ctx context.Context, req drain.Request, u drain.Untouched, log *slog.Logger) (*corev1.Node, error) {
	c, ok := w.d.(interface {
		CordonUntouched(context.Context, drain.Request, drain.Untouched, *slog.Logger) (*corev1.Node, error)
	})
	if !ok {
		return nil, fmt.Errorf("cordoning %s unread: the drainer cannot: %w", req.Node, drain.ErrTouched)
	}
	return c.CordonUntouched(ctx, req, u, log)
}
