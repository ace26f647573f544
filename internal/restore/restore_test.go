package restore

import (
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
)

// TestNewNamesEveryMissingDependency: a wiring that forgets a part fails at
// start with every missing part named, not at the first restore.
func TestNewNamesEveryMissingDependency(t *testing.T) {
	_, err := New(Config{}, Deps{})
	if err == nil {
		t.Fatal("New with no dependencies: no error")
	}
	for _, name := range []string{"lookups", "clusters", "node finder", "why ignored", "budget", "clock"} {
		if !strings.Contains(err.Error(), "missing "+name) {
			t.Errorf("error %q does not name missing %s", err, name)
		}
	}
}

// TestNewestRestoreAndThreat: the newest notice decides; launch hooks are
// no threat, and the threat time kept on the node ignores restores.
func TestNewestRestoreAndThreat(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	spot := event.Interruption{Kind: event.KindSpotInterruption, Time: t0}
	running := event.Interruption{Kind: event.KindStateChange, Time: t0.Add(time.Minute), Restore: true}
	launch := event.Interruption{Kind: event.KindASGLaunchLifecycle, Time: t0.Add(2 * time.Minute)}
	if _, ok := Of([]event.Interruption{spot, running, launch}); !ok {
		t.Error("a running notice after the warning, with a launch hook: no restore")
	}
	if _, ok := Of([]event.Interruption{running, {Kind: event.KindSpotInterruption, Time: t0.Add(2 * time.Minute)}}); ok {
		t.Error("a restore overtaken by a newer warning: still a restore")
	}
	if got := NewestTime([]event.Interruption{spot, running, launch}); !got.Equal(t0) {
		t.Errorf("NewestTime = %v, want the warning's %v", got, t0)
	}
	if got := Without([]event.Interruption{spot, running}); len(got) != 1 || got[0].Restore {
		t.Errorf("Without = %v, want the warning alone", got)
	}
	if !OnlyLaunches([]event.Interruption{launch}) || OnlyLaunches([]event.Interruption{launch, spot}) || OnlyLaunches(nil) {
		t.Error("OnlyLaunches: wrong for a launch alone, a launch with a warning, or nothing")
	}
	rebalance := event.Interruption{Kind: event.KindRebalanceRecommendation}
	if !RebalanceOnly([]event.Interruption{rebalance}) || RebalanceOnly([]event.Interruption{rebalance, spot}) || RebalanceOnly(nil) {
		t.Error("RebalanceOnly: wrong for a recommendation alone, with a warning, or nothing")
	}
}
