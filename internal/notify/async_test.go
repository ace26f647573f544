package notify

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/drainpipe/drainpipe/internal/drain"
)

// A slow webhook must not delay the task that reports to it (the handler
// would then retry a record whose work is done): RecordTask returns before
// the webhook answers, and Flush waits for the message.
func TestRecordTaskDoesNotWaitForTheWebhook(t *testing.T) {
	recorded := make(chan struct{})
	var received atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-recorded // answers only once RecordTask has returned
		received.Store(true)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	n := New(fixedURL(srv.URL+"/hook"), Options{OnError: func(err error) { t.Errorf("OnError(%v)", err) }})
	tk, res := task()
	n.RecordDrain("prod", drain.Report{Node: "node-a"})
	n.RecordTask(tk, res, 0)
	close(recorded)
	n.Flush(context.Background())
	if !received.Load() {
		t.Error("Flush returned before the webhook got the message")
	}
}

// Flush gives up when its context ends; the message may still go later.
func TestFlushBoundedByContext(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	defer close(release)
	n := New(fixedURL(srv.URL+"/hook"), Options{})
	tk, res := task()
	n.RecordDrain("prod", drain.Report{Node: "node-a"})
	n.RecordTask(tk, res, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n.Flush(ctx) // returns although the webhook has not answered
}
