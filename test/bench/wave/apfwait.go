package main

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/fleet"
)

// queueWaits is, per priority level, how many requests API Priority and
// Fairness dispatched and how long they waited for a seat in all
// (apiserver_flowcontrol_request_wait_duration_seconds).
type queueWaits struct{ count, sum map[string]float64 }

func readQueueWaits(ctx context.Context, admin kubernetes.Interface) (queueWaits, error) {
	m, err := fleet.ScrapeMetrics(ctx, admin)
	if err != nil {
		return queueWaits{}, err
	}
	const name = "apiserver_flowcontrol_request_wait_duration_seconds"
	var w queueWaits
	if w.count, err = m.Sum(name+"_count", "priority_level"); err != nil {
		return queueWaits{}, err
	}
	w.sum, err = m.Sum(name+"_sum", "priority_level")
	return w, err
}

// levelWait is one level's requests and their mean wait for a seat
// between two reads.
type levelWait struct {
	level    string
	requests int
	mean     time.Duration
}

func (w queueWaits) since(before queueWaits, level string) levelWait {
	n := w.count[level] - before.count[level]
	lw := levelWait{level: level, requests: int(n)}
	if n > 0 {
		lw.mean = time.Duration((w.sum[level] - before.sum[level]) / n * float64(time.Second))
	}
	return lw
}

func (lw levelWait) String() string {
	return fmt.Sprintf("level %s: %d requests, mean wait for a seat %.1f ms", lw.level, lw.requests, float64(lw.mean.Microseconds())/1000)
}
