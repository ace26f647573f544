package fleet

import (
	"context"
	"math"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// Hooks counts the fleet's lifecycle actions on fake: completed once,
// completed more than once (by token), still open.
type Hooks struct{ Completed, Double, Open int }

// HookState reads fake's record of the fleet's lifecycle actions. An
// action that expired (no heartbeat in time) was not completed by anyone:
// it counts as open, a hook left hanging.
func (f *Fleet) HookState(fake *awsfake.Server) Hooks {
	done := map[string]int{}
	for _, c := range fake.Completed() {
		if !c.Expired {
			done[c.Token]++
		}
	}
	var h Hooks
	for _, n := range f.Nodes {
		if n.Hook == nil {
			continue
		}
		switch k := done[n.Hook.Token]; {
		case k == 0:
			h.Open++
		case k == 1:
			h.Completed++
		default:
			h.Double++
		}
	}
	return h
}

// Unsettled counts the messages of a queue neither deleted nor
// dead-lettered.
func Unsettled(fake *awsfake.Server, queue string) (int, error) {
	msgs, err := fake.QueueMessages(queue)
	n := 0
	for _, m := range msgs {
		if m.DeletedAt.IsZero() && !m.DeadLettered {
			n++
		}
	}
	return n, err
}

// WaitSettled waits until every message of queue is deleted or
// dead-lettered; it returns how many were not when it gave up.
func WaitSettled(ctx context.Context, fake *awsfake.Server, queue string) (int, error) {
	var unsettled int
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
		var err error
		unsettled, err = Unsettled(fake, queue)
		return unsettled == 0, err
	})
	return unsettled, err
}

// Percentile is the p-th percentile (0–100, nearest rank) of ds; a zero
// duration (never seen) counts as infinite.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	for i, d := range s {
		if d == 0 {
			s[i] = time.Duration(math.MaxInt64)
		}
	}
	slices.Sort(s)
	k := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(k, len(s)-1))]
}

// APFRejected reads the API server's count of requests API Priority and
// Fairness rejected (apiserver_flowcontrol_rejected_requests_total, all
// priority levels and reasons).
func APFRejected(ctx context.Context, c kubernetes.Interface) (int, error) {
	m, err := ScrapeMetrics(ctx, c)
	if err != nil {
		return 0, err
	}
	r, err := m.Sum("apiserver_flowcontrol_rejected_requests_total", "")
	return int(r[""]), err
}
