package pipeline

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/group"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/policy"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// With the group limit's namespace absent, a terminate hook's drain goes
// on at once without the limit, with an ERROR log, on its first delivery
// (docs/drain-features.md#group-aware-drains): it is not left cordoned,
// waiting for a slot nobody holds.
func TestGroupLimitUnavailableDrainsAtOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	s := newLiveSceneWith(t, Config{}, func(d *Deps) {
		d.Log = log
		d.Groups = group.New(group.Config{Max: group.Limit{N: 1}, Namespace: "drainpipe-absent", Poll: 50 * time.Millisecond}, log)
	})
	n, id := s.node(ctx, fixture.NodeOptions{})
	s.env.Deployment(ctx, "web", 2, fixture.PinnedTo(n.Name))
	s.env.WaitPodsReady(ctx, "app=web", 2)

	tk := handler.Task{InstanceID: id, Action: policy.ActionCordonAndDrain, ReceiveCount: 1,
		Interruptions: []event.Interruption{hookOn(id, "prod-workers", "tok-1", s.clock.Now())}}
	r := s.actor.Act(ctx, tk)

	if r.Status != handler.StatusDone || !strings.Contains(r.Reason, "drained node") {
		t.Errorf("Act = {%s %q}, want the node drained", statusName(r.Status), r.Reason)
	}
	if !strings.Contains(logs.String(), `"level":"ERROR","msg":"group limit unavailable: draining without it"`) {
		t.Errorf("no ERROR log for the unavailable limit:\n%s", logs.String())
	}
}
