package pipeline

import (
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
)

// Only drains without a hard deadline wait for a slot of their group.
func TestMayWaitOnlyWithoutAHardDeadline(t *testing.T) {
	now := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	in := func(k event.Kind, deadline time.Duration) event.Interruption {
		i := event.Interruption{Kind: k}
		if deadline != 0 {
			i.Deadline = now.Add(deadline)
		}
		return i
	}
	for _, tt := range []struct {
		name string
		ins  []event.Interruption
		want bool
	}{
		{"terminate hook", []event.Interruption{in(event.KindASGLifecycle, 0)}, true},
		{"rebalance drain", []event.Interruption{in(event.KindRebalanceRecommendation, 0)}, true},
		{"scheduled change in three days", []event.Interruption{in(event.KindScheduledChange, 72*time.Hour)}, true},
		{"scheduled change in ten minutes", []event.Interruption{in(event.KindScheduledChange, 10*time.Minute)}, false},
		{"spot warning", []event.Interruption{in(event.KindSpotInterruption, 2*time.Minute)}, false},
		{"hook and spot warning", []event.Interruption{in(event.KindASGLifecycle, 0), in(event.KindSpotInterruption, 2*time.Minute)}, false},
		{"capacity reservation", []event.Interruption{in(event.KindCapacityReservationInterruption, 5*time.Minute)}, false},
		{"capacity block", []event.Interruption{in(event.KindCapacityBlockExpiry, 10*time.Minute)}, false},
		{"instance stopping", []event.Interruption{in(event.KindStateChange, 2*time.Minute)}, false},
		{"nothing", nil, false},
	} {
		if got := mayWait(handler.Task{Interruptions: tt.ins}, now); got != tt.want {
			t.Errorf("%s: mayWait = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// The group of a task: its hook's Auto Scaling group, else the instance's tag.
func TestGroupOfTask(t *testing.T) {
	dt := drainTarget{hooks: []hook{{Lifecycle: event.Lifecycle{ASG: "from-hook"}}}}
	dt.inst.Tags = map[string]string{GroupTag: "from-tag"}
	if got := groupOf(dt); got != "from-hook" {
		t.Errorf("groupOf with a hook = %q, want from-hook", got)
	}
	dt.hooks = nil
	if got := groupOf(dt); got != "from-tag" {
		t.Errorf("groupOf without a hook = %q, want from-tag", got)
	}
}
