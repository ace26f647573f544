package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/internal/preflight"
	"github.com/drainpipe/drainpipe/internal/version"
	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// On a real API server, `check` finds deploy/rbac.yaml,
// deploy/flowcontrol.yaml and deploy/admission-policy.yaml missing (the
// permissions group drainpipe lacks, the FlowSchemas and policies absent),
// then each in place once applied, policies and other manifests of another
// version than the function's as gaps, and exits 0
// when nothing is left: the account's one group served, the access entry
// there, the alarm topic confirmed.
func TestCheckClusterManifests(t *testing.T) {
	sb := sandbox.ForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	env := fixture.New(t, sb.RESTConfig())
	fake := checkAccount(t)
	fake.AddFunction("Drainpipe-Fn", map[string]string{"DRAINPIPE_CLUSTERS": "prod", "DRAINPIPE_ASG_NAMES": "prod-workers",
		"DRAINPIPE_LIFECYCLE_HOOK_NAMES": "drainpipe,drainpipe-launch"})
	fake.AddTopic(checkTopic, awsfake.Subscription{Protocol: "email", Endpoint: "oncall@example.com"})
	args := []string{"check", "--stack", "Drainpipe", "--kubeconfig", sb.KubeconfigPath(), "-o", "json"}
	// The gaps of checkAccount's other groups are TestCheckStackFindsGaps':
	// untagged here, they are no group of prod's.
	fake.AddAutoScalingGroup(awsfake.AutoScalingGroup{Name: "legacy-workers"})
	fake.AddAutoScalingGroup(awsfake.AutoScalingGroup{Name: "prod-nth"})

	_, bound := env.Client.RbacV1().ClusterRoleBindings().Get(ctx, "drainpipe", metav1.GetOptions{})
	if bound != nil { // a fresh sandbox: nothing applied yet
		code, stdout, stderr := runCLI(t, nil, "", args...)
		_, _, checks := decodeReport(t, stdout)
		if c := checks["prod/rbac"]; code != exitFail || c.Status != preflight.Gap || !slices.Contains(c.Missing, "create pods/eviction") ||
			!slices.Contains(c.Missing, "list leases.coordination.k8s.io in drainpipe") {
			t.Errorf("without deploy/rbac.yaml: %d %+v (%s)", code, c, stderr)
		}
		if c := checks["prod/flowcontrol"]; c.Status != preflight.Gap || len(c.Missing) != 4 {
			t.Errorf("without deploy/flowcontrol.yaml: %+v", c)
		}
	} else {
		t.Log("the package's sandbox already has deploy/rbac.yaml: only the applied half is checked")
	}

	env.ApplyRBAC(ctx, "../../deploy/rbac.yaml", preflight.Group)
	code, stdout, stderr := runCLI(t, nil, "", args...)
	_, _, checks := decodeReport(t, stdout)
	if c := checks["prod/rbac"]; c.Status != preflight.OK || code != exitFail {
		t.Errorf("with deploy/rbac.yaml only: %d %+v (%s)", code, c, stderr)
	}

	if _, _, err := fleet.ApplyFlowControl(ctx, env.Client, "../../deploy/flowcontrol.yaml"); err != nil {
		t.Fatal(err)
	}
	// RBAC alone is not the install: without the admission policies,
	// group drainpipe may patch any field of any node or pod.
	code, stdout, stderr = runCLI(t, nil, "", args...)
	_, _, checks = decodeReport(t, stdout)
	if c := checks["prod/admission policies"]; code != exitFail || c.Status != preflight.Gap ||
		!slices.Contains(c.Missing, "ValidatingAdmissionPolicy drainpipe-pod-changes not applied") {
		t.Errorf("without deploy/admission-policy.yaml: %d %+v (%s)", code, c, stderr)
	}
	if err := fleet.ApplyAdmissionPolicies(ctx, env.Client, "../../deploy/admission-policy.yaml"); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI(t, nil, "", args...)
	rep, _, checks := decodeReport(t, stdout)
	if code != exitOK {
		t.Errorf("everything in place: exit %d (%s)\n%s", code, stderr, stdout)
	}
	for key, c := range checks {
		if c.Status != preflight.OK {
			t.Errorf("%s: %+v", key, c)
		}
	}
	if len(rep.Hooks) != 1 || rep.Hooks[0].Group != "prod-workers" || rep.Hooks[0].Status != preflight.OK {
		t.Errorf("hooks %+v, want prod-workers' served", rep.Hooks)
	}

	// A function of another version than the policies: they may refuse
	// its writes, or admit what it no longer writes.
	fake.AddStack(awsfake.Stack{Name: "Drainpipe", Tags: map[string]string{"drainpipe:version": "9.9.9"},
		Outputs: map[string]string{"FunctionName": "Drainpipe-Fn", "QueueArn": checkQueue, "RoleArn": checkRole, "AlarmTopicArn": checkTopic}})
	code, stdout, stderr = runCLI(t, nil, "", args...)
	_, _, checks = decodeReport(t, stdout)
	if c := checks["prod/admission policies"]; code != exitFail || c.Status != preflight.Gap || len(c.Missing) != 2 ||
		!strings.Contains(c.Missing[0], fmt.Sprintf("of version %q, the function is 9.9.9", baseVersion(version.Get().Version))) {
		t.Errorf("policies of another version than the function's: %d %+v (%s)", code, c, stderr)
	}
	// And so are the other manifests: RBAC and flow control of another
	// release may lack what this function needs.
	ours := baseVersion(version.Get().Version)
	if c := checks["prod/versions"]; c.Status != preflight.Gap ||
		!slices.Contains(c.Missing, fmt.Sprintf("ClusterRole drainpipe (deploy/rbac.yaml) of version %q, the function is 9.9.9", ours)) ||
		!slices.Contains(c.Missing, fmt.Sprintf("FlowSchema drainpipe-nodes (deploy/flowcontrol.yaml) of version %q, the function is 9.9.9", ours)) ||
		!slices.Contains(c.Missing, fmt.Sprintf("ValidatingAdmissionPolicyBinding drainpipe-pod-changes (deploy/admission-policy.yaml) of version %q, the function is 9.9.9", ours)) {
		t.Errorf("manifests of another version than the function's: %+v", c)
	}
}
