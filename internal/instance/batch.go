package instance

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// preparedTTL bounds how long a prepared lookup waits for its task: a batch's
// tasks all start within one invocation, and EC2 state goes stale fast.
const preparedTTL = time.Minute

// looked is one instance lookup: found is false when EC2 does not know it.
type looked struct {
	inst  Instance
	found bool
	err   error
	at    time.Time
}

// Describer describes EC2 instances; ids missing from the answer do not
// exist. *Lookup fits.
type Describer interface {
	Describe(ctx context.Context, ids []string) (map[string]Instance, error)
}

var _ Describer = (*Lookup)(nil)

// Batch coalesces a batch's instance lookups into one Describe call:
// Prepare fills it, each task takes its entry once (Get), and a task
// without a prepared entry describes its instance alone. It is safe for
// concurrent use.
type Batch struct {
	src  Describer
	now  func() time.Time
	mu   sync.Mutex
	byID map[string]looked
}

// NewBatch returns a Batch describing with src on the clock now.
func NewBatch(src Describer, now func() time.Time) *Batch {
	return &Batch{src: src, now: now, byID: map[string]looked{}}
}

// Source is the Describer the batch asks.
func (l *Batch) Source() Describer { return l.src }

// Prepare describes every id in one call and keeps the answers (or the
// error, for each id) for Get.
func (l *Batch) Prepare(ctx context.Context, ids []string) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	if len(ids) == 0 {
		return
	}
	found, err := l.src.Describe(ctx, ids)
	if err != nil {
		err = fmt.Errorf("describing %d instances: %w", len(ids), err)
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, e := range l.byID {
		if now.Sub(e.at) > preparedTTL {
			delete(l.byID, id)
		}
	}
	for _, id := range ids {
		inst, ok := found[id]
		l.byID[id] = looked{inst: inst, found: ok, err: err, at: now}
	}
}

// Put keeps instances already described (a reservation's) for Get.
func (l *Batch) Put(found map[string]Instance) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, inst := range found {
		l.byID[id] = looked{inst: inst, found: true, at: now}
	}
}

// Get returns the prepared lookup of id, consuming it, or describes id.
func (l *Batch) Get(ctx context.Context, id string) (Instance, bool, error) {
	l.mu.Lock()
	e, ok := l.byID[id]
	delete(l.byID, id)
	l.mu.Unlock()
	if ok && l.now().Sub(e.at) <= preparedTTL {
		return e.inst, e.found, e.err
	}
	found, err := l.src.Describe(ctx, []string{id})
	if err != nil {
		return Instance{}, false, fmt.Errorf("describing instance %s: %w", id, err)
	}
	inst, ok := found[id]
	return inst, ok, nil
}
