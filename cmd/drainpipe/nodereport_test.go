package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// `drainpipe nodes NODE` shows the report of a drain still in progress:
// the pod a budget blocks, named with the budget.
func TestNodesShowsTheDrainReport(t *testing.T) {
	sb := sandbox.ForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	env := fixture.New(t, sb.RESTConfig())
	node := env.Node(ctx, fixture.NodeOptions{})
	env.Deployment(ctx, "db", 1, fixture.PinnedTo(node.Name), fixture.Labels(map[string]string{"app": "db"}))
	env.WaitDeploymentReady(ctx, "db")
	env.PDB(ctx, "db-budget", map[string]string{"app": "db"}, fixture.MinAvailable(1))

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	cfg := drain.DefaultConfig()
	cfg.OnEvent = func(e drain.Event) {
		if e.Type == drain.EventBlocked {
			stop() // the drain is stuck behind the budget: stop this Run there
		}
	}
	rep, err := drain.New(env.Client, cfg, nil).Run(runCtx, drain.Request{Node: node.Name, Kind: "asg-lifecycle", EventID: "ev-report", Evict: true})
	if err != nil || rep.Done {
		t.Fatalf("Run = %+v, %v; want it stopped unfinished", rep, err)
	}
	code, stdout, stderr := runCLI(t, nil, "", "nodes", "--kubeconfig", sb.KubeconfigPath(), node.Name)
	if code != exitOK {
		t.Fatalf("nodes NODE exited %d: %s", code, stderr)
	}
	for _, want := range []string{"drain draining", "blocked: " + env.Namespace + "/db-", "by PodDisruptionBudget db-budget", "refusals from"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("nodes %s output lacks %q:\n%s", node.Name, want, stdout)
		}
	}
}
