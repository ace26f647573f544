package policy

import (
	"testing"

	"github.com/drainpipe/drainpipe/internal/event"
)

func TestStrongest(t *testing.T) {
	tests := []struct {
		in   []Action
		want Action
	}{
		{nil, ActionNone},
		{[]Action{ActionNone}, ActionNone},
		{[]Action{ActionCordon, ActionNone}, ActionCordon},
		{[]Action{ActionCordon, ActionCordonAndDrain, ActionNone}, ActionCordonAndDrain},
		{[]Action{ActionCordonAndDrain, ActionCordon}, ActionCordonAndDrain},
		{[]Action{"bogus", ActionCordon}, ActionCordon},
		{[]Action{"bogus"}, ActionNone},
		{[]Action{ActionCordon, ActionCordon}, ActionCordon},
		{[]Action{ActionCordonAndDrain, "bogus"}, ActionCordonAndDrain},
	}
	for _, tt := range tests {
		if got := Strongest(tt.in...); got != tt.want {
			t.Errorf("Strongest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseAction(t *testing.T) {
	for _, s := range []string{"none", "cordon", "cordon-and-drain"} {
		if got, err := ParseAction(s); err != nil || string(got) != s {
			t.Errorf("ParseAction(%q) = %q, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "drain", "Cordon", "cordon-and-drain "} {
		if _, err := ParseAction(s); err == nil {
			t.Errorf("ParseAction(%q) succeeded, want an error", s)
		}
	}
}

func TestDefault(t *testing.T) {
	want := map[event.Kind]Action{
		event.KindSpotInterruption:                ActionCordonAndDrain,
		event.KindRebalanceRecommendation:         ActionCordon,
		event.KindStateChange:                     ActionCordonAndDrain,
		event.KindScheduledChange:                 ActionCordonAndDrain,
		event.KindASGLifecycle:                    ActionCordonAndDrain,
		event.KindCapacityReservationInterruption: ActionCordonAndDrain,
		event.KindCapacityBlockExpiry:             ActionCordonAndDrain,
	}
	p := Default()
	for _, k := range event.Kinds() {
		if got := p.For(k); got != want[k] {
			t.Errorf("Default().For(%s) = %q, want %q", k, got, want[k])
		}
		if Var(k) == "" {
			t.Errorf("Var(%s) is empty", k)
		}
	}
	if got := p.For("unknown"); got != ActionNone {
		t.Errorf("For(unknown) = %q, want none", got)
	}
}

func TestForInterruption(t *testing.T) {
	p := Default()
	tests := []struct {
		name string
		in   event.Interruption
		want Action
	}{
		{"retirement", event.Interruption{Kind: event.KindScheduledChange}, ActionCordonAndDrain},
		{"maintenance", event.Interruption{Kind: event.KindScheduledChange, CordonOnly: "network maintenance"}, ActionCordon},
		{"closed notice", event.Interruption{Kind: event.KindScheduledChange, Restore: true}, ActionNone},
		{"capacity reservation", event.Interruption{Kind: event.KindCapacityReservationInterruption}, ActionCordonAndDrain},
	}
	for _, tt := range tests {
		if got := p.ForInterruption(tt.in); got != tt.want {
			t.Errorf("%s: ForInterruption = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := (Policy{event.KindScheduledChange: ActionNone}).ForInterruption(event.Interruption{Kind: event.KindScheduledChange, CordonOnly: "x"}); got != ActionNone {
		t.Errorf("CordonOnly raised none to %q", got)
	}
}
