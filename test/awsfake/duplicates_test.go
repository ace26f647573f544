package awsfake

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// copies returns the states of id's copies by copy number.
func copies(t *testing.T, s *Server, url, id string) map[int]MessageState {
	t.Helper()
	states, err := s.QueueMessages(url)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]MessageState{}
	for _, st := range states {
		if st.ID == id {
			out[st.Copy] = st
		}
	}
	return out
}

// TestDuplicatesGoToSeparateReceivers: a message sent to a queue with
// Duplicates 2 reaches two receives under one id and body with their own
// receipt handles, never both in one; each copy's handle acts on that
// copy only, on the wire too.
func TestDuplicatesGoToSeparateReceivers(t *testing.T) {
	s, ctx := setup(t)
	client := sqs.NewFromConfig(s.Config())
	url, err := s.CreateQueue("123456789012", "dup", QueueOptions{VisibilityTimeout: time.Hour, Duplicates: 2})
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.SendMessage(url, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if c := copies(t, s, url, id); len(c) != 2 || c[0].Body != "hello" || c[1].Body != "hello" {
		t.Fatalf("copies after one send = %+v, want copies 0 and 1 of hello", c)
	}

	a := receiveOne(ctx, t, s, url)
	b := receiveOne(ctx, t, s, url)
	if a.MessageID != id || b.MessageID != id || b.Body != a.Body || a.ReceiptHandle == b.ReceiptHandle || a.ReceiveCount != 1 || b.ReceiveCount != 1 {
		t.Errorf("deliveries %+v and %+v: want both copies of %s, first receives, own handles", a, b, id)
	}
	if got, _ := s.ReceiveMessages(ctx, url, 10, 0); len(got) != 0 {
		t.Errorf("a third delivery of two copies: %+v", got)
	}

	// Visible again on the wire: only a's copy.
	if _, err := client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String(a.ReceiptHandle)}); err != nil {
		t.Fatalf("changing a's visibility: %v", err)
	}
	again := receiveOne(ctx, t, s, url)
	if again.ReceiveCount != 2 {
		t.Errorf("redelivery %+v: want a's copy, its second receive", again)
	}
	if err := s.DeleteMessage(url, again.ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	c := copies(t, s, url, id)
	if c[0].DeletedAt.IsZero() == c[1].DeletedAt.IsZero() {
		t.Fatalf("after deleting one copy: %+v, want exactly one deleted", c)
	}
	if err := s.DeleteMessage(url, b.ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	for n, st := range copies(t, s, url, id) {
		if st.DeletedAt.IsZero() || st.InFlight {
			t.Errorf("copy %d after both deletes: %+v", n, st)
		}
	}
}

// TestDuplicatesDeadLetteredApart: each copy counts its own receives and
// moves to the dead-letter queue on its own, keeping id, body and copy
// number; the dead-letter queue too hands out one copy per receive.
func TestDuplicatesDeadLetteredApart(t *testing.T) {
	s, ctx := setup(t)
	dlq, err := s.CreateQueue("123456789012", "dup-dlq", QueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	url, err := s.CreateQueue("123456789012", "dup", QueueOptions{VisibilityTimeout: time.Hour, MaxReceiveCount: 1, DeadLetterURL: dlq, Duplicates: 2})
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.SendMessage(url, "poison")
	if err != nil {
		t.Fatal(err)
	}
	first := receiveOne(ctx, t, s, url)
	if err := s.ChangeVisibility(url, first.ReceiptHandle, 0); err != nil {
		t.Fatal(err)
	}
	// The first copy is due for redrive; the second has not been received.
	second := receiveOne(ctx, t, s, url)
	if second.ReceiveCount != 1 || second.ReceiptHandle == first.ReceiptHandle {
		t.Errorf("after the first copy's redrive, delivery %+v: want the second copy's first receive", second)
	}
	c := copies(t, s, url, id)
	if c[0].DeadLettered == c[1].DeadLettered {
		t.Fatalf("copies %+v: want exactly one dead-lettered", c)
	}
	if d := copies(t, s, dlq, id); len(d) != 1 {
		t.Fatalf("dead-letter queue holds %+v, want one copy", d)
	}

	if err := s.ChangeVisibility(url, second.ReceiptHandle, 0); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ReceiveMessages(ctx, url, 10, 0); len(got) != 0 {
		t.Errorf("a copy received past maxReceiveCount: %+v", got)
	}
	d := copies(t, s, dlq, id)
	if len(d) != 2 || d[0].Body != "poison" || d[1].Body != "poison" {
		t.Fatalf("dead-letter queue holds %+v, want copies 0 and 1", d)
	}
	x := receiveOne(ctx, t, s, dlq)
	y := receiveOne(ctx, t, s, dlq)
	if x.MessageID != id || y.MessageID != id || x.ReceiptHandle == y.ReceiptHandle {
		t.Errorf("dead-letter deliveries %+v and %+v: want each copy of %s once", x, y, id)
	}
}

// TestDuplicatesNeverShareAReceive: over many messages and copies, no
// receive holds one id twice and every copy is received exactly once;
// Deliver stores the copies too and hands out one.
func TestDuplicatesNeverShareAReceive(t *testing.T) {
	s, ctx := setup(t)
	url, err := s.CreateQueue("123456789012", "dup", QueueOptions{VisibilityTimeout: time.Hour, Duplicates: 3})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := s.SendMessage(url, "m"); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.Deliver(url, "d")
	if err != nil || len(recs) != 1 {
		t.Fatalf("Deliver = %d records, %v; want 1", len(recs), err)
	}
	seen := map[string]int{recs[0].MessageId: 1}
	for receives := 0; ; receives++ {
		got, err := s.ReceiveMessages(ctx, url, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			break
		}
		inBatch := map[string]bool{}
		for _, r := range got {
			if inBatch[r.MessageID] {
				t.Errorf("receive %d holds %s twice", receives, r.MessageID)
			}
			inBatch[r.MessageID] = true
			seen[r.MessageID]++
		}
	}
	if len(seen) != 6 {
		t.Errorf("received %d distinct ids, want 6", len(seen))
	}
	for id, n := range seen {
		if n != 3 {
			t.Errorf("%s received %d times, want once per copy (3)", id, n)
		}
	}
	states, err := s.QueueMessages(url)
	if err != nil || len(states) != 18 {
		t.Errorf("QueueMessages lists %d states (%v), want 18", len(states), err)
	}
}
