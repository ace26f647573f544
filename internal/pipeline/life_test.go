package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/hold"
)

// readLife is hooks that read a group's action life, counting reads.
type readLife struct {
	fakeHooks
	life  time.Duration
	err   error
	reads map[string]int
}

func (r *readLife) ActionLife(_ context.Context, asg string, _ []string) (time.Duration, error) {
	r.reads[asg]++
	return r.life, r.err
}

// On a redelivery, a terminate action's hold ends at its start plus the
// group's action life, read once per group; other holds, a first
// delivery, and an unreadable life leave the holds as they are.
func TestRecordLife(t *testing.T) {
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	lc := func(asg, token string) event.Interruption {
		return event.Interruption{Kind: event.KindASGLifecycle, Time: at, Lifecycle: &event.Lifecycle{ASG: asg, Token: token}}
	}
	task := handler.Task{ReceiveCount: 2, Interruptions: []event.Interruption{
		lc("g1", "tok-1"), lc("g1", "tok-2"),
		{Kind: event.KindSpotInterruption, EventID: "tok-1", Time: at},
		{Kind: event.KindASGLifecycle, Time: at},                                               // no action
		{Kind: event.KindASGLifecycle, Lifecycle: &event.Lifecycle{ASG: "g2", Token: "tok-3"}}, // no time
	}}
	fresh := func() []hold.Hold {
		return []hold.Hold{{Kind: string(event.KindASGLifecycle), ID: "tok-1"}, {Kind: string(event.KindASGLifecycle), ID: "tok-2"},
			{Kind: string(event.KindSpotInterruption), ID: "tok-1"}, {Kind: string(event.KindASGLifecycle), ID: "tok-3"}}
	}
	hooks := &readLife{life: time.Hour, reads: map[string]int{}}
	a := &Actor{hooks: hooks, log: slog.New(slog.DiscardHandler)}
	holds := fresh()
	a.recordLife(context.Background(), task, holds)
	end := hold.Stamp(at.Add(time.Hour))
	if holds[0].End != end || holds[1].End != end || holds[2].End != "" || holds[3].End != "" {
		t.Errorf("hold ends %q, %q, %q, %q; want %q twice, then none", holds[0].End, holds[1].End, holds[2].End, holds[3].End, end)
	}
	a.recordLife(context.Background(), task, fresh())
	if hooks.reads["g1"] != 1 || hooks.reads["g2"] != 0 {
		t.Errorf("reads %v, want g1 read once", hooks.reads)
	}

	first := task
	first.ReceiveCount = 1
	holds = fresh()
	a.recordLife(context.Background(), first, holds)
	if holds[0].End != "" {
		t.Error("a first delivery waited to read the action's life")
	}

	failing := &readLife{err: errors.New("denied"), reads: map[string]int{}}
	a = &Actor{hooks: failing, log: slog.New(slog.DiscardHandler)}
	holds = fresh()
	a.recordLife(context.Background(), task, holds)
	a.recordLife(context.Background(), task, holds)
	if holds[0].End != "" || failing.reads["g1"] != 4 {
		t.Errorf("unreadable life: end %q, reads %v; want no end, a read for each action each time", holds[0].End, failing.reads)
	}

	a = &Actor{hooks: &fakeHooks{}, log: slog.New(slog.DiscardHandler)}
	holds = fresh()
	a.recordLife(context.Background(), task, holds)
	if holds[0].End != "" {
		t.Error("hooks that cannot read a life set an end")
	}
}
