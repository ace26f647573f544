package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLoadHooks(t *testing.T) {
	got, err := Load(env(map[string]string{
		"DRAINPIPE_HOOK_RESERVE":      "12s",
		"DRAINPIPE_HEARTBEAT_CAP":     "10s",
		"DRAINPIPE_ASG_NAMES":         "prod-a, prod-b,",
		"DRAINPIPE_ASG_NAME_PREFIX":   "eks-prod-",
		"DRAINPIPE_LAUNCH_WAIT_READY": "false",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Hooks{Reserve: 12 * time.Second, HeartbeatCap: 10 * time.Second, ASGNames: []string{"prod-a", "prod-b"},
		ASGNamePrefix: "eks-prod-", LaunchWaitReady: false}
	if diff := cmp.Diff(want, got.Hooks); diff != "" {
		t.Errorf("Hooks (-want +got):\n%s", diff)
	}
	def, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Hooks{Reserve: 5 * time.Second, HeartbeatCap: 25 * time.Second, LaunchWaitReady: true}, def.Hooks); diff != "" {
		t.Errorf("default Hooks (-want +got):\n%s", diff)
	}
}

func TestLoadHooksErrors(t *testing.T) {
	for name, value := range map[string]string{
		"DRAINPIPE_HOOK_RESERVE":    "500ms",
		"DRAINPIPE_HEARTBEAT_CAP":   "30s",
		"DRAINPIPE_ASG_NAMES":       "arn:aws:autoscaling:eu-west-1:1:group",
		"DRAINPIPE_ASG_NAME_PREFIX": "a:b",
	} {
		_, err := Load(env(map[string]string{name: value}))
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Load(%s=%q) error = %v, want one naming the variable", name, value, err)
		}
	}
}
