package main

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// `drainpipe nodes` lists a node Drainpipe cordoned with its kind, event,
// deadline and what it holds; `drainpipe uncordon` gives it back exactly
// (the operator's exclusion label value restored), after which it is no
// longer listed; a second uncordon says there is nothing to give back.
func TestNodesAndUncordon(t *testing.T) {
	sb := sandbox.ForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	env := fixture.New(t, sb.RESTConfig())
	node := env.Node(ctx, fixture.NodeOptions{Labels: map[string]string{drain.ExcludeFromLBLabel: "false"}})
	deadline := time.Date(2026, 11, 20, 10, 2, 0, 0, time.UTC)
	d := drain.New(env.Client, drain.DefaultConfig(), nil)
	if _, err := d.Run(ctx, drain.Request{Node: node.Name, Kind: "spot-interruption", EventID: "ev-cli", Deadline: deadline}); err != nil {
		t.Fatal(err)
	}
	kc := sb.KubeconfigPath()

	code, stdout, stderr := runCLI(t, nil, "", "nodes", "--kubeconfig", kc)
	if code != exitOK {
		t.Fatalf("nodes exited %d: %s", code, stderr)
	}
	line := lineOf(stdout, node.Name)
	for _, want := range []string{"spot-interruption", "ev-cli", "2026-11-20T10:02:00Z", "cordon,taint"} {
		if !strings.Contains(line, want) {
			t.Errorf("nodes line %q lacks %q", line, want)
		}
	}

	code, stdout, stderr = runCLI(t, nil, "", "uncordon", node.Name, "--kubeconfig", kc)
	if code != exitOK || !strings.Contains(stdout, "given back") {
		t.Fatalf("uncordon = %d, %q, %q", code, stdout, stderr)
	}
	got, err := env.Client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Unschedulable || got.Labels[drain.ExcludeFromLBLabel] != "false" || drain.ReadMarks(got).Held() {
		t.Errorf("after uncordon: unschedulable %v, label %q, marks %+v", got.Spec.Unschedulable,
			got.Labels[drain.ExcludeFromLBLabel], drain.ReadMarks(got))
	}
	_, stdout, _ = runCLI(t, nil, "", "nodes", "--kubeconfig", kc)
	if l := lineOf(stdout, node.Name); l != "" {
		t.Errorf("node still listed after uncordon: %q", l)
	}
	code, stdout, _ = runCLI(t, nil, "", "uncordon", "--kubeconfig", kc, node.Name)
	if code != exitOK || !strings.Contains(stdout, "no Drainpipe marks") {
		t.Errorf("second uncordon = %d, %q; want nothing to give back", code, stdout)
	}
}

func TestNodesUsage(t *testing.T) {
	if code, _, stderr := runCLI(t, nil, "", "uncordon", "--kubeconfig", "/nonexistent/kubeconfig", "n1"); code != exitUsage ||
		!strings.Contains(stderr, "loading kubeconfig") {
		t.Errorf("uncordon with a missing kubeconfig = %d, %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, nil, "", "uncordon", "--kubeconfig", "/nonexistent/kubeconfig"); code != exitUsage {
		t.Errorf("uncordon without a node = %d, %q", code, stderr)
	}
}

// lineOf returns the line of out that starts with name, or "".
func lineOf(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, name+" ") {
			return l
		}
	}
	return ""
}
