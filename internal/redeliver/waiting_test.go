package redeliver

import (
	"testing"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// Waiting counts the messages visible in the queue an ARN names: those in
// flight (received, not yet deleted) are not waiting.
func TestWaiting(t *testing.T) {
	sc := newScene(t, 0)
	sc.msg(t, sc.urlA, 1) // received: in flight
	for _, body := range []string{"{}", "{}", "{}"} {
		if _, err := sc.fake.SendMessage(sc.urlA, body); err != nil {
			t.Fatal(err)
		}
	}
	n, err := sc.s.Waiting(sc.ctx, awsfake.QueueARN(sc.urlA))
	if err != nil || n != 3 {
		t.Errorf("Waiting(queue-a) = %d, %v; want 3", n, err)
	}
	if n, err := sc.s.Waiting(sc.ctx, awsfake.QueueARN(sc.urlB)); err != nil || n != 0 {
		t.Errorf("Waiting(queue-b) = %d, %v; want 0", n, err)
	}
	if _, err := sc.s.Waiting(sc.ctx, "not-an-arn"); err == nil {
		t.Errorf("Waiting(not-an-arn): no error")
	}
}
