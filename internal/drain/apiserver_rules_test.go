package drain_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/drainpipe/drainpipe/internal/drain"
)

func TestWatchClosingAtOnceBacksOff(t *testing.T) {
	t.Parallel() // waits on real time; in parallel, the package's short tests stay short
	// A server (or proxy) that ends every watch at once: the Run must
	// not spin reconnecting while it waits for the evicted pod.
	s, client := newAPIServer(t)
	s.closeWatches = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := drain.New(client, drain.DefaultConfig(), nil).Run(ctx, drain.Request{Node: "n1", Kind: "spot-interruption", Evict: true, Deadline: time.Now().Add(2 * time.Second)}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	s.mu.Lock()
	n := s.watches
	s.mu.Unlock()
	// Backoff from 100 ms doubling fits under 10 attempts in 2 s; a
	// loop without it makes hundreds.
	if n > 10 {
		t.Errorf("%d watches in the Run's 2 s, want a backoff between watches that end at once", n)
	}
}

func TestStuckPodIsNotWaitedFor(t *testing.T) {
	t.Parallel() // waits on real time; in parallel, the package's short tests stay short
	// Evicted, but a finalizer no one removes holds it: after its grace
	// and the stuck timeout, the Run reports it stuck and is done.
	s, client := newAPIServer(t)
	s.hold = true
	s.pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := drain.DefaultConfig()
	cfg.StuckAfter = time.Second
	rep, err := drain.New(client, cfg, nil).Run(ctx, drain.Request{Node: "n1", Kind: "asg-lifecycle", Evict: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !rep.Done || strings.Join(rep.Stuck, ",") != "ns/p" || len(rep.Terminating) != 0 || ctx.Err() != nil {
		t.Errorf("report = %+v, want ns/p stuck and the Run done", rep)
	}
}

func TestBlockedPodIsDeletedBeforeTheDeadline(t *testing.T) {
	t.Parallel() // waits on real time; in parallel, the package's short tests stay short
	// A budget refuses every eviction; two margins before the deadline
	// the pod is deleted with the grace left, under its UID.
	refused := answer{code: http.StatusTooManyRequests, status: budgetRefusal(0)}
	script := make([]answer, 100)
	for i := range script {
		script[i] = refused
	}
	s, client := newAPIServer(t, script...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := drain.DefaultConfig()
	cfg.SafetyMargin = time.Second
	deadline := time.Now().Add(4 * time.Second)
	rep, err := drain.New(client, cfg, nil).Run(ctx, drain.Request{Node: "n1", Kind: "spot-interruption", Evict: true, Deadline: deadline})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	s.mu.Lock()
	deletes := s.deletes
	s.mu.Unlock()
	if len(deletes) != 1 || deletes[0].Preconditions == nil || deletes[0].Preconditions.UID == nil || *deletes[0].Preconditions.UID != "uid-p" ||
		deletes[0].GracePeriodSeconds == nil || *deletes[0].GracePeriodSeconds > 2 {
		t.Fatalf("deletes = %+v, want one under the pod's UID with at most 2 s grace", deletes)
	}
	if strings.Join(rep.DeletedAtDeadline, ",") != "ns/p" || len(rep.BlockedByPDB) != 0 {
		t.Errorf("report = %+v, want ns/p deleted at the deadline", rep)
	}
}
