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

// uncordon -l (or --all) says which nodes it would give back and gives
// back none unless confirmed: --yes, or y at a terminal. A node whose Spot
// deadline is still running is left held, and said so, unless --force,
// even when named.
func TestUncordonConfirmAndLiveDeadline(t *testing.T) {
	sb := sandbox.ForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	env := fixture.New(t, sb.RESTConfig())
	d := drain.New(env.Client, drain.DefaultConfig(), nil)
	now := time.Now()
	take := func(id string, deadline time.Time) string {
		n := env.Node(ctx, fixture.NodeOptions{})
		if _, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "spot-interruption", EventID: id, Deadline: deadline}); err != nil {
			t.Fatal(err)
		}
		return n.Name
	}
	passed, none, live := take("ev-passed", now.Add(-time.Hour)), take("ev-none", time.Time{}), take("ev-live", now.Add(time.Hour))
	held := func() (h []string) {
		for _, n := range []string{passed, none, live} {
			if got, err := env.Client.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{}); err == nil && drain.ReadMarks(got).Held() {
				h = append(h, n)
			}
		}
		return h
	}
	kc, sel := sb.KubeconfigPath(), fixture.PoolLabel+"="+env.Pool
	skipped := "node " + live + " left as it is: held for spot-interruption whose deadline"

	code, stdout, stderr := runCLI(t, nil, "", "uncordon", "--kubeconfig", kc, "-l", sel)
	if code != exitUsage || !strings.Contains(stderr, "--yes") || !strings.Contains(stderr, "give back 2 node(s)") ||
		!strings.Contains(stderr, passed) || !strings.Contains(stderr, none) || !strings.Contains(stdout, skipped) || len(held()) != 3 {
		t.Errorf("-l, no terminal, no --yes: exit %d, stdout %q, stderr %q, held %v; want %d, the two nodes named, "+
			"the live one skipped, all 3 still held", code, stdout, stderr, held(), exitUsage)
	}
	if code, _, stderr = runCLI(t, nil, "", "uncordon", "--kubeconfig", kc, "--all"); code != exitUsage || len(held()) != 3 {
		t.Errorf("--all, no terminal, no --yes: exit %d, stderr %q, held %v; want %d, all 3 still held", code, stderr, held(), exitUsage)
	}
	if code, _, stderr = runTerminal(t, nil, "n\n", "uncordon", "--kubeconfig", kc, "-l", sel); code != exitUsage ||
		!strings.Contains(stderr, "[y/N]") || len(held()) != 3 {
		t.Errorf("-l answered n: exit %d, stderr %q, held %v; want %d, all 3 still held", code, stderr, held(), exitUsage)
	}
	code, stdout, stderr = runTerminal(t, nil, "y\n", "uncordon", "--kubeconfig", kc, "-l", sel)
	if h := held(); code != exitOK || len(h) != 1 || h[0] != live || !strings.Contains(stdout, skipped) ||
		!strings.Contains(stdout, passed+" given back") || !strings.Contains(stdout, none+" given back") {
		t.Errorf("-l answered y: exit %d, stdout %q, stderr %q, held %v; want 0, only %s still held", code, stdout, stderr, h, live)
	}

	code, stdout, _ = runCLI(t, nil, "", "uncordon", "--kubeconfig", kc, live)
	if code != exitOK || !strings.Contains(stdout, skipped) || !strings.Contains(stdout, "--force") || len(held()) != 1 {
		t.Errorf("named, live deadline: exit %d, stdout %q, held %v; want it left held and --force named", code, stdout, held())
	}
	code, stdout, _ = runCLI(t, nil, "", "uncordon", "--kubeconfig", kc, live, "--force")
	if code != exitOK || !strings.Contains(stdout, live+" given back") || len(held()) != 0 {
		t.Errorf("named with --force: exit %d, stdout %q, held %v; want it given back", code, stdout, held())
	}
}
