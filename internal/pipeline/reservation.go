package pipeline

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
)

// reservations lists the instances in a Capacity Reservation;
// *instance.Lookup fits.
type reservations interface {
	InReservation(ctx context.Context, id string) (map[string]instance.Instance, error)
}

var _ reservations = (*instance.Lookup)(nil)

// actOnReservation carries out a Capacity Block task: it finds the block's
// instances (one EC2 call), then acts on each as its own task, at once,
// and folds their results into one, so the records behind the block end
// done, ignored or retry with every instance's reason. The expansion lives
// here, not in the handler's plan, because the plan does no I/O; a retry
// redelivers the notice and finds the instances again.
func (a *Actor) actOnReservation(ctx context.Context, t handler.Task) handler.Result {
	src, ok := a.lookups.Source().(reservations)
	if !ok {
		return ignored("the instance lookup cannot list a capacity reservation's instances")
	}
	found, err := src.InReservation(ctx, t.Reservation)
	if err != nil {
		return retryAWS("finding the instances of capacity reservation "+t.Reservation, err, a.log.With("reservation", t.Reservation))
	}
	if len(found) == 0 {
		return ignored(fmt.Sprintf("capacity reservation %s has no instances", t.Reservation))
	}
	a.lookups.Put(found)
	ids := slices.Sorted(maps.Keys(found))
	results := make([]handler.Result, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = a.Act(ctx, forInstance(t, id))
		}()
	}
	wg.Wait()
	return fold(ids, results)
}

// forInstance is a reservation task as it concerns one of its instances.
func forInstance(t handler.Task, id string) handler.Task {
	t.InstanceID, t.Reservation = id, ""
	ins := make([]event.Interruption, len(t.Interruptions))
	for i, in := range t.Interruptions {
		in.Instances = []string{id}
		ins[i] = in
	}
	t.Interruptions = ins
	return t
}

// fold is the worst of the instances' results (retry, then done, then
// ignored), with every instance's reason.
func fold(ids []string, results []handler.Result) handler.Result {
	rank := map[handler.Status]int{handler.StatusIgnored: 0, handler.StatusDone: 1, handler.StatusRetry: 2}
	out := handler.Result{Status: handler.StatusIgnored}
	reasons := make([]string, len(ids))
	for i, r := range results {
		if rank[r.Status] > rank[out.Status] {
			out.Status = r.Status
		}
		out.HoldFor = max(out.HoldFor, r.HoldFor)
		out.RetryWithin = handler.SoonerWithin(out.RetryWithin, r.RetryWithin)
		reasons[i] = ids[i] + ": " + r.Reason
	}
	out.Reason = strings.Join(reasons, "; ")
	return out
}
