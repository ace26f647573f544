package esm_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/esm"
	"github.com/drainpipe/drainpipe/test/lambdart"
)

func buildFn(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a bootstrap; skipped under -short")
	}
	out := filepath.Join(t.TempDir(), "bootstrap")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	if err := (lambdart.Build{Dir: ".", Package: "./testdata/batchfn", Output: out}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	return out
}

// queues makes a fake with a queue shaped by o and its dead-letter queue.
func queues(t *testing.T, o awsfake.QueueOptions) (fake *awsfake.Server, url, dlq string) {
	t.Helper()
	fake = awsfake.New()
	t.Cleanup(fake.Close)
	dlq, err := fake.CreateQueue("123456789012", "fn-dlq", awsfake.QueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o.DeadLetterURL = dlq
	if url, err = fake.CreateQueue("123456789012", "fn", o); err != nil {
		t.Fatal(err)
	}
	return fake, url, dlq
}

// send enqueues bodies and returns them by message id.
func send(t *testing.T, fake *awsfake.Server, url string, bodies ...string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, b := range bodies {
		id, err := fake.SendMessage(url, b)
		if err != nil {
			t.Fatal(err)
		}
		ids[id] = b
	}
	return ids
}

// start starts a mapping, stopped when the test ends.
func start(t *testing.T, opts esm.Options) *esm.Mapping {
	t.Helper()
	m, err := esm.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Error(err)
		}
	})
	return m
}

// settle waits until every message of url is deleted or dead-lettered and
// returns their states.
func settle(t *testing.T, fake *awsfake.Server, url string) []awsfake.MessageState {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var states []awsfake.MessageState
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		var err error
		states, err = fake.QueueMessages(url)
		for _, s := range states {
			if s.DeletedAt.IsZero() && !s.DeadLettered {
				return false, err
			}
		}
		return true, err
	})
	if err != nil {
		t.Fatalf("queue never settled: %v (%+v)", err, states)
	}
	return states
}

// TestMappingPartialBatchTimeoutAndRedrive runs the mapping over a queue
// with a dead-letter queue: done messages are deleted, failed items and
// the batch of a timed-out invocation come back and are redriven after
// maxReceiveCount deliveries, and no more environments run than allowed.
func TestMappingPartialBatchTimeoutAndRedrive(t *testing.T) {
	bootstrap := buildFn(t)
	fake, url, _ := queues(t, awsfake.QueueOptions{VisibilityTimeout: 2 * time.Second, MaxReceiveCount: 2})
	ids := send(t, fake, url, "ok", "fail", "ok", "hang", "ok", "ok")
	m := start(t, esm.Options{
		Fake: fake, QueueURL: url, QueueARN: "arn:aws:sqs:us-west-2:123456789012:fn",
		BatchSize: 2, MaxConcurrency: 2, Timeout: time.Second, Bootstrap: bootstrap,
	})
	states := settle(t, fake, url)
	invs := m.Invocations()
	// An ok message batched with a hang shares that invocation's fate; it
	// is dead-lettered only if every invocation that carried it timed out
	// (a redelivery may batch it with others and succeed).
	onlyHung := map[string]bool{}
	for _, inv := range invs {
		for _, id := range inv.IDs {
			prev, seen := onlyHung[id]
			onlyHung[id] = (prev || !seen) && inv.Outcome == "timeout"
		}
	}
	for _, s := range states {
		want := ids[s.ID] != "ok" || onlyHung[s.ID]
		if s.DeadLettered != want || len(s.Receives) > 2 {
			t.Errorf("message %q: dead-lettered %v after %d receives, want dead-lettered %v", ids[s.ID], s.DeadLettered, len(s.Receives), want)
		}
	}
	counts := map[string]int{}
	for _, inv := range invs {
		counts[inv.Outcome]++
		if inv.Cold {
			counts["cold"]++
		}
	}
	if counts["timeout"] < 2 || counts["partial"] < 1 || counts["cold"] < 2 || counts["ok"]+counts["partial"] <= counts["cold"]-counts["timeout"] {
		t.Errorf("invocation outcomes %v: want timeouts that cost environments, partial batches and warm reuse", counts)
	}
	if p := m.PeakEnvironments(); p < 1 || p > 2 {
		t.Errorf("peak environments = %d, want 1–2", p)
	}
}

// TestMappingDuplicates runs the mapping over a queue that stores every
// message twice (SQS's at-least-once delivery): a batch never holds one
// id twice, so a partial batch response naming message ids keeps exactly
// the failed copy; each copy is deleted or dead-lettered on its own.
func TestMappingDuplicates(t *testing.T) {
	bootstrap := buildFn(t)
	fake, url, dlq := queues(t, awsfake.QueueOptions{VisibilityTimeout: 500 * time.Millisecond, MaxReceiveCount: 1, Duplicates: 2})
	ids := send(t, fake, url, "ok", "fail", "ok", "fail")
	m := start(t, esm.Options{
		Fake: fake, QueueURL: url, QueueARN: "arn:aws:sqs:us-west-2:123456789012:fn",
		MaxConcurrency: 2, Timeout: 10 * time.Second, Bootstrap: bootstrap,
	})
	states := settle(t, fake, url)
	if len(states) != 8 {
		t.Errorf("queue lists %d copies, want 8", len(states))
	}
	for _, s := range states {
		if fail := ids[s.ID] == "fail"; s.DeadLettered != fail || len(s.Receives) != 1 {
			t.Errorf("%s copy %d of %s: dead-lettered %v after %d receives, want dead-lettered %v after 1", ids[s.ID], s.Copy, s.ID, s.DeadLettered, len(s.Receives), fail)
		}
	}
	if dead, err := fake.QueueMessages(dlq); err != nil || len(dead) != 4 {
		t.Errorf("dead-letter queue lists %d copies (%v), want 4", len(dead), err)
	}
	for _, inv := range m.Invocations() {
		seen := map[string]bool{}
		for _, id := range inv.IDs {
			if seen[id] {
				t.Errorf("invocation %+v carries %s twice", inv, id)
			}
			seen[id] = true
		}
	}
}
