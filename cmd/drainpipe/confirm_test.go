package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// runTerminal is runCLI with standard input a terminal on which the
// operator types answer.
func runTerminal(t *testing.T, env map[string]string, answer string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := cli{Stdin: strings.NewReader(answer), Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] }, Terminal: true}
	code = run(context.Background(), c, args)
	return code, out.String(), errOut.String()
}

// A sweep that would write is refused without --yes when nothing can be
// asked (exit 2, saying what it would do), and when the answer at a
// terminal is not y; both before any AWS call (the endpoint is nowhere).
func TestSweepNeedsConfirmation(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
	env := map[string]string{"DRAINPIPE_CLUSTERS": "prod"}
	kc := writeKubeconfig(t)
	code, stdout, stderr := runCLI(t, env, "", "sweep", "--kubeconfig", kc)
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "--yes") || !strings.Contains(stderr, "--dry-run") ||
		!strings.Contains(stderr, "give back a node") || !strings.Contains(stderr, kc) {
		t.Errorf("no terminal, no --yes: exit %d, stdout %q, stderr %q; want %d saying what it would do and asking for --yes",
			code, stdout, stderr, exitUsage)
	}
	code, stdout, stderr = runTerminal(t, env, "n\n", "sweep", "--kubeconfig", kc)
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "[y/N]") || !strings.Contains(stderr, "nothing done") {
		t.Errorf("answered n: exit %d, stdout %q, stderr %q; want %d, nothing done", code, stdout, stderr, exitUsage)
	}
}

// dlq redrive says what it would move and moves nothing without --yes
// (no terminal) or without a y (terminal); with a y it moves them.
func TestDLQRedriveNeedsConfirmation(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	fake, queue, dlq := newFakeQueues(t)
	deadLetter(ctx, t, fake, queue, makeOK(t, "event", "rebalance", "--account", dlqAccount, "--region", awsfake.Region),
		makeOK(t, "event", "spot", "--account", dlqAccount, "--region", awsfake.Region))

	code, stdout, stderr := runCLI(t, nil, "", "dlq", "redrive", "--queue", dlq)
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "--yes") || !strings.Contains(stderr, "about 2 messages") ||
		!strings.Contains(stderr, "message-move task") {
		t.Errorf("no terminal, no --yes: exit %d, stdout %q, stderr %q; want %d naming the 2 messages and the move task",
			code, stdout, stderr, exitUsage)
	}
	code, _, stderr = runTerminal(t, nil, "\n", "dlq", "redrive", "--queue", dlq)
	if code != exitUsage || !strings.Contains(stderr, "nothing done") {
		t.Errorf("answered nothing: exit %d, stderr %q; want %d, nothing done", code, stderr, exitUsage)
	}
	if tasks := fake.MoveTasks(); len(tasks) != 0 {
		t.Fatalf("move tasks %+v before any confirmation, want none", tasks)
	}
	code, stdout, stderr = runTerminal(t, nil, "y\n", "dlq", "redrive", "--queue", dlq)
	var res redriveResult
	if err := json.Unmarshal([]byte(stdout), &res); code != exitOK || err != nil || res.Method != "move-task" {
		t.Fatalf("answered y: exit %d, %s %v, stderr %s; want a move task", code, stdout, err, stderr)
	}
	if tasks := fake.MoveTasks(); len(tasks) != 1 || tasks[0].Moved != 2 {
		t.Errorf("move tasks %+v, want one moving 2 messages", tasks)
	}
}
