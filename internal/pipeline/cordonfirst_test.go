package pipeline

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// The second instance of a batch of two, and its node.
const other, otherNode = "i-0fedcba9876543210", "ip-10-0-1-24.eu-west-1.compute.internal"

// batchOfTwo is a rig draining through d our instance and other, and a
// batch of their Spot warnings: ours on its first delivery, other's on
// delivery receives.
func batchOfTwo(t *testing.T, d *fakeDrainer, receives int) (*rig, []handler.Task) {
	t.Helper()
	inst2 := ourInstance()
	inst2.ID, inst2.PrivateDNSName = other, otherNode
	r := newRig(t, rigOpts{
		instances: map[string]instance.Instance{instID: ourInstance(), other: inst2},
		nodes:     map[string]string{instID: nodeName, other: otherNode},
		drainer:   d,
	})
	spot2 := spot(t0)
	spot2.Instances = []string{other}
	return r, []handler.Task{task(policy.ActionCordonAndDrain, 1, spot(t0)),
		{InstanceID: other, Action: policy.ActionCordonAndDrain, Interruptions: []event.Interruption{spot2}, ReceiveCount: receives}}
}

// actBatch prepares tasks as one batch and acts on them all at once, as
// the handler does, until every task has ended.
func actBatch(r *rig, tasks []handler.Task) {
	ctx := context.Background()
	r.actor.Prepare(ctx, tasks)
	var wg sync.WaitGroup
	for _, tk := range tasks {
		wg.Go(func() { r.actor.Act(ctx, tk) })
	}
	wg.Wait()
}

// A batch cordons all its nodes before any of them is evicted: in the
// 200-node wave an environment's first drains fired their evictions while
// its last cordons were still on their way, and those cordons waited
// behind them for seconds (1.2–4.5 s in one environment).
func TestBatchCordonsBeforeItEvicts(t *testing.T) {
	var mu sync.Mutex
	var order []string
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	evictedA, parked := make(chan struct{}), make(chan struct{})
	d := &fakeDrainer{report: drain.Report{Done: true}, run: func(ctx context.Context, req drain.Request) {
		if req.Node == otherNode {
			// The second node's cordon comes late: once the first node
			// has either evicted or is held for it.
			select {
			case <-evictedA:
			case <-parked:
			}
		}
		note("cordon " + req.Node)
		if req.AfterCordon != nil {
			req.AfterCordon(ctx)
		}
		note("evict " + req.Node)
		if req.Node == nodeName {
			close(evictedA)
		}
	}}
	r, tasks := batchOfTwo(t, d, 1)
	var once sync.Once
	r.actor.parked = func() { once.Do(func() { close(parked) }) }
	actBatch(r, tasks)
	want := map[string]int{}
	for i, s := range order {
		want[s] = i
	}
	if want["evict "+nodeName] < want["cordon "+otherNode] {
		t.Errorf("order %v: want every cordon of the batch before its first eviction", order)
	}
}

// A wave's batch (every record on its first delivery) holds its drains
// waveHold past its last cordon, so that its evictions and events do not
// reach the API server beside the other environments' cordons; a batch
// with a redelivery does not: its nodes were cordoned long ago.
func TestWaveBatchHoldsItsEvictionsAfterItsCordons(t *testing.T) {
	for _, tc := range []struct {
		name     string
		receives int
		holds    int
	}{{"first deliveries", 1, 2}, {"a redelivery", 2, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var order []string
			note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
			d := &fakeDrainer{report: drain.Report{Done: true}, run: func(ctx context.Context, req drain.Request) {
				note("cordon")
				if req.AfterCordon != nil {
					req.AfterCordon(ctx)
				}
				note("evict")
			}}
			r, tasks := batchOfTwo(t, d, tc.receives)
			r.actor.waveWait = func(context.Context, time.Time) { note("hold") }
			actBatch(r, tasks)
			// Each drain holds between the batch's cordons and its own
			// evictions: no eviction comes before as many holds.
			holds, evicts, lastCordon, firstEvict := 0, 0, -1, len(order)
			for i, s := range order {
				switch s {
				case "hold":
					holds++
				case "cordon":
					lastCordon = i
				case "evict":
					evicts++
					firstEvict = min(firstEvict, i)
					if tc.holds > 0 && holds < evicts {
						t.Errorf("order %v: an eviction before its hold", order)
					}
				}
			}
			if holds != tc.holds || lastCordon > firstEvict {
				t.Errorf("order %v: want %d holds and every cordon before the first eviction", order, tc.holds)
			}
		})
	}
}
