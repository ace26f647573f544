package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// dlqAccount owns the queues of these tests.
const dlqAccount = "123456789012"

// newQueues makes the stack's pair on a fake whose endpoint the process's
// AWS configuration points at: a queue whose redrive policy dead-letters a
// message on its third receive.
func newQueues(t *testing.T, fake *awsfake.Server) (queue, dlq string) {
	t.Helper()
	for _, kv := range fake.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	dlq, err := fake.CreateQueue(dlqAccount, "Drainpipe-dlq", awsfake.QueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	queue, err = fake.CreateQueue(dlqAccount, "Drainpipe", awsfake.QueueOptions{MaxReceiveCount: 2, DeadLetterURL: dlq})
	if err != nil {
		t.Fatal(err)
	}
	return queue, dlq
}

// newFakeQueues is newQueues on a fake of its own.
func newFakeQueues(t *testing.T) (fake *awsfake.Server, queue, dlq string) {
	t.Helper()
	fake = awsfake.New()
	t.Cleanup(fake.Close)
	queue, dlq = newQueues(t, fake)
	return fake, queue, dlq
}

// deadLetter sends bodies to queue and fails each delivery until SQS moves
// them to the dead-letter queue.
func deadLetter(ctx context.Context, t *testing.T, fake *awsfake.Server, queue string, bodies ...string) {
	t.Helper()
	for _, b := range bodies {
		if _, err := fake.SendMessage(queue, b); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 { // received, not deleted, visible again: a failed delivery
		got, err := fake.ReceiveMessages(ctx, queue, 10, 0)
		if err != nil || len(got) != len(bodies) {
			t.Fatalf("receive: %d messages, %v; want %d", len(got), err, len(bodies))
		}
		for _, r := range got {
			if err := fake.ChangeVisibility(queue, r.ReceiptHandle, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got, err := fake.ReceiveMessages(ctx, queue, 10, 0); err != nil || len(got) != 0 {
		t.Fatalf("third receive: %d messages, %v; want none (all dead-lettered)", len(got), err)
	}
}

// TestDLQList lists a dead-letter queue holding a lifecycle action, a Spot
// warning whose deadline passed hours ago, a rebalance recommendation as
// old and a restore: each with the verdict it would get if redriven now,
// from the same decision code as the function's (the hook completed, the
// Spot warning left as stale, the rebalance acted on, the node given
// back). The listing leaves them in the queue.
func TestDLQList(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	fake, queue, dlq := newFakeQueues(t)
	old := time.Now().Add(-3 * time.Hour).UTC().Format(time.RFC3339)
	from := []string{"--account", dlqAccount, "--region", awsfake.Region, "--at", old}
	deadLetter(ctx, t, fake, queue,
		makeOK(t, append([]string{"event", "asg-terminate", "--instance", "i-0000000000000000a"}, from...)...),
		makeOK(t, append([]string{"event", "spot", "--instance", "i-0000000000000000b"}, from...)...),
		makeOK(t, append([]string{"event", "rebalance", "--instance", "i-0000000000000000c"}, from...)...),
		makeOK(t, append([]string{"event", "state-change", "--state", "running", "--instance", "i-0000000000000000d"}, from...)...))

	code, out, stderr := runCLI(t, nil, "", "dlq", "list", "--queue", dlq, "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	var entries []dlqEntry
	if err := json.Unmarshal([]byte(out), &entries); err != nil || len(entries) != 4 {
		t.Fatalf("output %s: %v; want four entries", out, err)
	}
	want := map[string]struct{ kind, verdict, reason string }{
		"i-0000000000000000a": {"asg-lifecycle", "act", "complete hook my-asg/drainpipe"},
		"i-0000000000000000b": {"spot-interruption", "ignore", "stale"},
		"i-0000000000000000c": {"rebalance-recommendation", "act", "cordon"},
		"i-0000000000000000d": {"state-change", "return", "would give back the node"},
	}
	for _, e := range entries {
		w, ok := want[strings.Join(e.Instances, ",")]
		if !ok || e.Kind != w.kind || e.Verdict != w.verdict || !strings.Contains(e.Reason, w.reason) || e.ReceiveCount != 1 || e.Sent == "" {
			t.Errorf("entry %+v; want kind %s, verdict %s with %q, receive count 1, a sent time", e, w.kind, w.verdict, w.reason)
		}
	}
	// Listed, then visible again: the table sees all four.
	code, out, _ = runCLI(t, nil, "", "dlq", "list", "--queue", dlq)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != exitOK || len(lines) != 5 || !strings.HasPrefix(lines[0], "MESSAGE ID") {
		t.Errorf("table: exit %d\n%s\nwant a header and four lines", code, out)
	}
}

// TestDLQRedriveCompletesLifecycle: a terminate hook and a Spot warning,
// both three hours old, dead-lettered, redriven by SQS's move task and
// handled as the function would handle them: the hook (still pending) is
// completed after the drain; the Spot warning, whose deadline passed hours
// ago, is reported and not acted on. Nothing is left in either queue.
func TestDLQRedriveCompletesLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	s := newRunScene(ctx, t)
	s.fake.AddLifecycleAction(awsfake.LifecycleAction{ASG: "workers", Hook: "drain", Token: hookToken, InstanceID: s.instance})
	queue, dlq := newQueues(t, s.fake)
	old := time.Now().Add(-3 * time.Hour).UTC().Format(time.RFC3339)
	from := []string{"--account", dlqAccount, "--region", awsfake.Region, "--at", old, "--instance", s.instance}
	deadLetter(ctx, t, s.fake, queue,
		makeOK(t, append([]string{"event", "asg-terminate", "--group", "workers", "--hook", "drain", "--token", hookToken}, from...)...),
		makeOK(t, append([]string{"event", "spot"}, from...)...))

	code, out, stderr := runCLI(t, nil, "", "dlq", "redrive", "--queue", dlq, "--yes")
	var res redriveResult
	if err := json.Unmarshal([]byte(out), &res); code != exitOK || err != nil || res.Method != "move-task" || res.TaskHandle == "" {
		t.Fatalf("redrive: exit %d, %s %v, stderr %s; want a move task", code, out, err, stderr)
	}
	if tasks := s.fake.MoveTasks(); len(tasks) != 1 || tasks[0].Moved != 2 {
		t.Fatalf("move tasks %+v, want one moving 2 messages", tasks)
	}
	got, err := s.fake.ReceiveMessages(ctx, queue, 10, 0)
	if err != nil || len(got) != 2 {
		t.Fatalf("redriven: %d messages, %v; want 2", len(got), err)
	}
	var batch events.SQSEvent
	for _, r := range got {
		if r.ReceiveCount != 1 {
			t.Errorf("redriven message %s: receive count %d, want 1 (SQS sends it anew)", r.MessageID, r.ReceiveCount)
		}
		batch.Records = append(batch.Records, awsfake.Record(r, awsfake.QueueARN(queue)))
	}
	input, err := json.Marshal(batch)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DRAINPIPE_CLUSTERS": runCluster}
	code, stdout, stderr := runCLI(t, env, string(input), "run", "--kubeconfig", s.kubeconfig, "--timeout", "90s", "--yes", "-")
	if code != exitOK || strings.TrimSpace(stdout) != `{"batchItemFailures":[]}` {
		t.Fatalf("run: exit %d, stdout %s\nstderr: %s", code, stdout, stderr)
	}
	st := s.state(ctx, t)
	if len(st.Completed) != 1 || st.Completed[0] != "drain=CONTINUE" || len(st.Pods) != 0 {
		t.Errorf("after the redrive: %+v; want the node drained and the hook completed with CONTINUE", st)
	}
	var spot bool
	for _, line := range strings.Split(stderr, "\n") {
		var l struct{ Msg, Kind, Outcome, Reason string }
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "record handled" && l.Kind == "spot-interruption" {
			spot = l.Outcome == "ignored" && strings.Contains(l.Reason, "stale") && strings.Contains(l.Reason, "deadline")
		}
	}
	if !spot {
		t.Errorf("no 'record handled' line ignoring the Spot warning for its passed deadline:\n%s", stderr)
	}
	if msgs, err := s.fake.ReceiveMessages(ctx, dlq, 10, 0); err != nil || len(msgs) != 0 {
		t.Errorf("dead-letter queue after the redrive: %d messages, %v; want none", len(msgs), err)
	}
}

// TestDLQResend: a queue that is no SQS queue's dead-letter queue (one
// EventBridge dead-letters into) is redriven by receive-and-resend, each
// body kept as it was.
func TestDLQResend(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	fake, queue, _ := newFakeQueues(t)
	rules, err := fake.CreateQueue(dlqAccount, "rules-dlq", awsfake.QueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	body := makeOK(t, "event", "rebalance", "--account", dlqAccount)
	if _, err := fake.SendMessage(rules, body); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, nil, "", "dlq", "redrive", "--queue", rules); code != exitUsage || !strings.Contains(stderr, "--to") {
		t.Errorf("without --to: exit %d, stderr %s; want %d asking for --to", code, stderr, exitUsage)
	}
	code, out, stderr := runCLI(t, nil, "", "dlq", "redrive", "--queue", rules, "--to", queue, "--yes")
	var res redriveResult
	if err := json.Unmarshal([]byte(out), &res); code != exitOK || err != nil || res.Method != "resend" || res.Moved != 1 {
		t.Fatalf("exit %d, %s %v, stderr %s; want one message resent", code, out, err, stderr)
	}
	got, err := fake.ReceiveMessages(ctx, queue, 10, 0)
	if err != nil || len(got) != 1 || got[0].Body != body {
		t.Errorf("queue holds %+v, %v; want the body as it was", got, err)
	}
	if left, _ := fake.ReceiveMessages(ctx, rules, 10, 0); len(left) != 0 {
		t.Errorf("%d messages left in the dead-letter queue, want none", len(left))
	}
}

func TestDLQUsage(t *testing.T) {
	for _, args := range [][]string{
		{"dlq"}, {"dlq", "purge", "--queue", "u"}, {"dlq", "list"}, {"dlq", "list", "--queue", "u", "-o", "yaml"},
	} {
		if code, out, _ := runCLI(t, nil, "", args...); code != exitUsage || out != "" {
			t.Errorf("%v: exit %d, stdout %q; want %d and nothing", args, code, out, exitUsage)
		}
	}
}
