package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnknownNames(t *testing.T) {
	environ := []string{
		"DRAINPIPE_TAINT_EFECT=NoSchedule", // a typo
		"DRAINPIPE_CLUSTERS=prod",          // known
		"PATH=/bin",                        // not ours
		"DRAINPIPE_COMPLETELY_DIFFERENT=1",
		"DRAINPIPE_ACTION_SPOT_=cordon",
	}
	got := UnknownNames(environ)
	want := []Unknown{
		{Name: "DRAINPIPE_ACTION_SPOT_", Closest: "DRAINPIPE_ACTION_SPOT"},
		{Name: "DRAINPIPE_COMPLETELY_DIFFERENT"},
		{Name: "DRAINPIPE_TAINT_EFECT", Closest: "DRAINPIPE_TAINT_EFFECT"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("UnknownNames (-want +got):\n%s", diff)
	}
	if got := want[2].String(); got != "DRAINPIPE_TAINT_EFECT is not a Drainpipe setting (did you mean DRAINPIPE_TAINT_EFFECT?)" {
		t.Errorf("String = %q", got)
	}
}

func TestEveryKnownNameIsKnown(t *testing.T) {
	var environ []string
	for _, s := range Settings() {
		environ = append(environ, Prefix+s.Name+"=x")
	}
	if got := UnknownNames(environ); len(got) > 0 {
		t.Errorf("UnknownNames of the settings table = %v, want none", got)
	}
}
