package pipeline

import (
	"testing"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
)

// Only a task of lifecycle hooks alone, outside a dry run, checks that its
// actions are still pending before it evicts.
func TestPendingCheckOnlyForHooks(t *testing.T) {
	hooks := []hook{{Lifecycle: *lifecycleEvent(t0).Lifecycle}}
	hooksOnly := handler.Task{Interruptions: []event.Interruption{lifecycleEvent(t0)}}
	withSpot := handler.Task{Interruptions: []event.Interruption{lifecycleEvent(t0), {Kind: event.KindSpotInterruption}}}
	for _, tt := range []struct {
		name   string
		dryRun bool
		task   handler.Task
		hooks  []hook
		want   bool
	}{
		{"hooks only", false, hooksOnly, hooks, true},
		{"dry run", true, hooksOnly, hooks, false},
		{"no hooks served", false, hooksOnly, nil, false},
		{"another notice", false, withSpot, hooks, false},
	} {
		a := &Actor{cfg: Config{DryRun: tt.dryRun}}
		if got := a.pendingCheck(tt.task, tt.hooks) != nil; got != tt.want {
			t.Errorf("%s: check %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A task without interruptions is no task of hooks alone.
func TestOnlyHooksOfNothing(t *testing.T) {
	if onlyHooks(handler.Task{}) {
		t.Error("a task without interruptions counts as hooks alone")
	}
	if !onlyHooks(handler.Task{Interruptions: []event.Interruption{lifecycleEvent(t0)}}) {
		t.Error("a task of one hook does not count as hooks alone")
	}
}
