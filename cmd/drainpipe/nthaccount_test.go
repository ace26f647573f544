package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNTHValuesNamesWhatItCannotKnow: NTH's values never say which Auto
// Scaling groups' hooks it serves nor the hooks' names, and without
// asgNames/asgNamePrefix and lifecycleHookNames the stack serves none of
// them. nth-values must say so, in its JSON and to the reader, naming the
// context keys to set.
func TestNTHValuesNamesWhatItCannotKnow(t *testing.T) {
	code, out, stderr := runCLI(t, nil, "", "nth-values", filepath.Join("testdata", "nth-values-defaults.yaml"))
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	var res struct {
		NotInValues []nthAccountKey `json:"notInValues"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output %s: %v", out, err)
	}
	var keys []string
	for _, k := range res.NotInValues {
		keys = append(keys, k.Context...)
		if k.Why == "" || !strings.HasPrefix(k.Find, "aws autoscaling ") && !strings.HasPrefix(k.Find, "helm get values karpenter ") {
			t.Errorf("%v: want a reason and the command that finds it, got %+v", k.Context, k)
		}
	}
	if !slices.ContainsFunc(res.NotInValues, func(k nthAccountKey) bool { return strings.Contains(k.Why, "Karpenter's interruption queue") }) {
		t.Error("notInValues does not ask whether Karpenter's interruption queue is on")
	}
	for _, want := range []string{"asgNames", "asgNamePrefix", "lifecycleHookNames"} {
		if !slices.Contains(keys, want) {
			t.Errorf("notInValues %v lacks %s", keys, want)
		}
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not name %s: %q", want, stderr)
		}
	}
}
