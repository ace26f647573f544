package config

import (
	"strings"
	"testing"

	"github.com/drainpipe/drainpipe/internal/event"
)

func TestLoadAccept(t *testing.T) {
	got, err := Load(env(map[string]string{"DRAINPIPE_ACCEPT": "eventbridge, asg-direct"}))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Accept.Has(event.ShapeEventBridge) || !got.Accept.Has(event.ShapeASGDirect) || got.Accept.Has(event.ShapeSNS) {
		t.Errorf("Accept = %v, want eventbridge and asg-direct only", got.Accept)
	}
	unset, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range event.AllShapes() {
		if !unset.Accept.Has(s) {
			t.Errorf("unset DRAINPIPE_ACCEPT refuses %q", s)
		}
	}
	if _, err := Load(env(map[string]string{"DRAINPIPE_ACCEPT": "eventbridge,email"})); err == nil ||
		!strings.Contains(err.Error(), "DRAINPIPE_ACCEPT") || !strings.Contains(err.Error(), "email") {
		t.Errorf("Load(DRAINPIPE_ACCEPT=eventbridge,email) error = %v, want it named", err)
	}
}
