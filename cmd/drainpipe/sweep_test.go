package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/sweep"
)

// `drainpipe sweep` prints the sweep's report: with -o json the report
// itself, each repair with its node and reason; by default its summary and
// one line per node. A dry run writes nothing.
func TestSweepPrintsItsReport(t *testing.T) {
	ctx := t.Context()
	s := newRunScene(ctx, t)
	// A Spot warning whose deadline passed while the instance still runs:
	// the sweep gives its node back (margin 0: the test cannot wait 10 m).
	now := time.Now()
	req := drain.Request{Node: s.node.Name, Kind: "spot-interruption", EventID: "spot-lost",
		Deadline: now.Add(-time.Minute), EventTime: now.Add(-3 * time.Minute)}
	if _, err := drain.New(s.env.Client, drain.DefaultConfig(), nil).Run(ctx, req); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DRAINPIPE_CLUSTERS": runCluster, "DRAINPIPE_SWEEP_MARGIN": "0s"}
	args := []string{"sweep", "--kubeconfig", s.kubeconfig, "--dry-run", "--timeout", "30s"}

	code, stdout, stderr := runCLI(t, env, "", append(args, "-o", "json")...)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	var rep sweep.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("-o json printed %q: %v", stdout, err)
	}
	var got *sweep.Repair
	for i, r := range rep.Repairs {
		if r.Node == s.node.Name {
			got = &rep.Repairs[i]
		}
	}
	if !rep.DryRun || rep.Checked < 1 || got == nil || got.What != sweep.RepairGivenBack || got.Instance != s.instance ||
		got.Cluster != runCluster || got.Reason == "" {
		t.Errorf("report %+v: want a dry run giving back node %s (%s) with its reason", rep, s.node.Name, s.instance)
	}
	if st := s.state(ctx, t); !st.Unschedulable {
		t.Errorf("node %s uncordoned by a dry run", s.node.Name)
	}

	code, stdout, stderr = runCLI(t, env, "", args...)
	if code != exitOK || !strings.HasPrefix(stdout, "dry run: sweep: ") {
		t.Fatalf("exit %d, stdout %q, stderr %s; want the summary first", code, stdout, stderr)
	}
	var line string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, s.node.Name+" ") {
			line = l
		}
	}
	if !strings.Contains(line, sweep.RepairGivenBack) || !strings.Contains(line, s.instance) {
		t.Errorf("table %q: want a line giving back node %s", stdout, s.node.Name)
	}
}
