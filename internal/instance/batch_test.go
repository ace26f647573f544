package instance

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// describer answers from known and records each call's ids.
type describer struct {
	known map[string]Instance
	err   error
	calls [][]string
}

func (d *describer) Describe(_ context.Context, ids []string) (map[string]Instance, error) {
	d.calls = append(d.calls, ids)
	if d.err != nil {
		return nil, d.err
	}
	out := map[string]Instance{}
	for _, id := range ids {
		if i, ok := d.known[id]; ok {
			out[id] = i
		}
	}
	return out, nil
}

// A batch describes its instances once, each task takes its answer once,
// and a task without one (or with one older than preparedTTL) describes
// its instance alone.
func TestBatchCoalescesLookups(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1e9, 0)
	d := &describer{known: map[string]Instance{"i-1": {ID: "i-1", State: "running"}, "i-2": {ID: "i-2"}}}
	b := NewBatch(d, func() time.Time { return now })
	b.Prepare(ctx, nil)
	if len(d.calls) != 0 {
		t.Fatalf("an empty batch described %v", d.calls)
	}
	b.Prepare(ctx, []string{"i-2", "i-1", "i-2", "i-3"})
	if len(d.calls) != 1 || !slices.Equal(d.calls[0], []string{"i-1", "i-2", "i-3"}) {
		t.Fatalf("calls %v, want one of i-1, i-2, i-3", d.calls)
	}
	if inst, found, err := b.Get(ctx, "i-1"); err != nil || !found || inst.State != "running" {
		t.Errorf("prepared i-1: %+v, %v, %v", inst, found, err)
	}
	if _, found, err := b.Get(ctx, "i-3"); err != nil || found {
		t.Errorf("prepared i-3, unknown to EC2: found %v, %v", found, err)
	}
	if len(d.calls) != 1 {
		t.Errorf("prepared lookups described again: %v", d.calls)
	}
	if _, found, _ := b.Get(ctx, "i-1"); !found || len(d.calls) != 2 {
		t.Errorf("a second Get of i-1: found %v after calls %v, want it described alone", found, d.calls)
	}
	// i-2 is exactly preparedTTL old when the next batch prepares: kept,
	// and still served.
	now = now.Add(preparedTTL)
	b.Prepare(ctx, []string{"i-1"})
	if _, found, _ := b.Get(ctx, "i-2"); !found || len(d.calls) != 3 {
		t.Errorf("i-2 at the TTL: found %v, calls %v, want the prepared answer", found, d.calls)
	}
	now = now.Add(time.Nanosecond)
	if _, found, _ := b.Get(ctx, "i-1"); !found || len(d.calls) != 3 {
		t.Errorf("i-1 within the TTL: found %v, calls %v", found, d.calls)
	}
	b.Prepare(ctx, []string{"i-2"})
	now = now.Add(preparedTTL + time.Nanosecond)
	if _, found, _ := b.Get(ctx, "i-2"); !found || len(d.calls) != 5 {
		t.Errorf("i-2 past the TTL: found %v, calls %v, want it described again", found, d.calls)
	}
	b.Put(map[string]Instance{"i-9": {ID: "i-9", State: "pending"}})
	if inst, found, err := b.Get(ctx, "i-9"); err != nil || !found || inst.State != "pending" || len(d.calls) != 5 {
		t.Errorf("put i-9: %+v, %v, %v", inst, found, err)
	}
	if b.Source() != Describer(d) {
		t.Error("Source is not the batch's describer")
	}
}

// A failed Describe is every prepared task's error, and a lone Get's.
func TestBatchDescribeFails(t *testing.T) {
	ctx := context.Background()
	d := &describer{err: errors.New("throttled")}
	b := NewBatch(d, time.Now)
	b.Prepare(ctx, []string{"i-1", "i-2"})
	if _, _, err := b.Get(ctx, "i-1"); err == nil || err.Error() != "describing 2 instances: throttled" {
		t.Errorf("prepared: %v", err)
	}
	if _, _, err := b.Get(ctx, "i-1"); err == nil || err.Error() != "describing instance i-1: throttled" {
		t.Errorf("alone: %v", err)
	}
}

func TestSpot(t *testing.T) {
	if !(Instance{Lifecycle: "spot"}).Spot() || (Instance{}).Spot() || (Instance{Lifecycle: "capacity-block"}).Spot() {
		t.Error("Spot is not EC2's spot lifecycle alone")
	}
}
