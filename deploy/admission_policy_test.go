package deploy_test

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/preflight"
)

// TestAdmissionPolicyBoundsMatchDrainpipe: the policy's size bounds are
// the ones internal/drain proves its writes fit, and its node policy lists
// every annotation Drainpipe writes.
func TestAdmissionPolicyBoundsMatchDrainpipe(t *testing.T) {
	want := map[string]map[string]string{
		"drainpipe-node-changes": {"maxValue": strconv.Itoa(drain.MaxAnnotationChars), "maxReport": strconv.Itoa(drain.MaxReportChars),
			"maxHolds": strconv.Itoa(drain.MaxHoldsChars)},
		"drainpipe-pod-changes": {"maxValue": strconv.Itoa(drain.MaxAnnotationChars)},
	}
	seen := 0
	for _, p := range policyManifest(t) {
		vars := map[string]string{}
		for _, v := range p.policy.Spec.Variables {
			vars[v.Name] = v.Expression
		}
		for name, value := range want[p.policy.Name] {
			seen++
			if vars[name] != value {
				t.Errorf("%s: variable %s = %q, want %q", p.policy.Name, name, vars[name], value)
			}
			for _, v := range p.policy.Spec.Validations {
				if strings.Contains(v.Expression, "variables."+name) && !strings.Contains(v.Message, value) {
					t.Errorf("%s: message %q does not say the bound %s", p.policy.Name, v.Message, value)
				}
			}
		}
		if p.policy.Name != "drainpipe-node-changes" {
			continue
		}
		for _, k := range append(drain.OwnAnnotations(), drain.AnnotationActed) {
			if !strings.Contains(vars["ownKeys"], "'"+k+"'") {
				t.Errorf("%s: ownKeys does not list %s, which Drainpipe writes", p.policy.Name, k)
			}
		}
	}
	if seen != 4 {
		t.Errorf("found %d of the 4 bounds: policies renamed?", seen)
	}
}

// TestAdmissionPoliciesVersioned: each policy carries the version in
// internal/version/VERSION, which `drainpipe check` compares with the
// deployed function's, and the manifest holds every policy check reads.
func TestAdmissionPoliciesVersioned(t *testing.T) {
	b, err := os.ReadFile("../internal/version/VERSION")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(b))
	var names []string
	for _, p := range policyManifest(t) {
		names = append(names, p.policy.Name)
		if got := p.policy.Labels[preflight.VersionLabel]; got != want {
			t.Errorf("%s: label %s = %q, want %q (internal/version/VERSION)", p.policy.Name, preflight.VersionLabel, got, want)
		}
		if !slices.Contains(p.binding.Spec.ValidationActions, "Deny") {
			t.Errorf("%s: binding's validationActions %v, want Deny", p.binding.Name, p.binding.Spec.ValidationActions)
		}
	}
	if !slices.Equal(names, preflight.WantPolicies()) {
		t.Errorf("policies %v, want %v (preflight.WantPolicies)", names, preflight.WantPolicies())
	}
}
