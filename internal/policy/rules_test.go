package policy

import (
	"testing"

	"github.com/drainpipe/drainpipe/internal/event"
)

func TestCordonOnlyKeepsACordon(t *testing.T) {
	cordon := Policy{event.KindScheduledChange: ActionCordon}
	if got := cordon.ForInterruption(event.Interruption{Kind: event.KindScheduledChange, CordonOnly: "x"}); got != ActionCordon {
		t.Errorf("cordon only, policy cordon: %q, want cordon", got)
	}
}

func TestForRefusesAnInvalidAction(t *testing.T) {
	p := Policy{event.KindSpotInterruption: "bogus"}
	if got := p.For(event.KindSpotInterruption); got != ActionNone {
		t.Errorf("For with an invalid action = %q, want none", got)
	}
	if got := (Policy{}).For(event.KindSpotInterruption); got != ActionNone {
		t.Errorf("For of a kind not in the policy = %q, want none", got)
	}
}

func TestVarNamesEveryKind(t *testing.T) {
	seen := map[string]event.Kind{}
	for _, k := range event.Kinds() {
		v := Var(k)
		if v == "" {
			t.Errorf("kind %s has no variable", k)
		}
		if other, dup := seen[v]; dup {
			t.Errorf("kinds %s and %s share %s", k, other, v)
		}
		seen[v] = k
	}
	if Var("meteor") != "" {
		t.Error("an unknown kind has a variable")
	}
	if got, want := IgnoreReason(event.KindSpotInterruption), "policy: spot-interruption is none (DRAINPIPE_ACTION_SPOT)"; got != want {
		t.Errorf("IgnoreReason = %q, want %q", got, want)
	}
}
