package kevents

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/drainpipe/drainpipe/internal/drain"
)

// events returns the events of ns by reason.
func events(t *testing.T, c *fake.Clientset, ns string) map[string]corev1.Event {
	t.Helper()
	list, err := c.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]corev1.Event{}
	for _, e := range list.Items {
		out[e.Reason] = e
	}
	return out
}

// Each pod event tells the operator what happened to the pod and why.
func TestPodEventMessages(t *testing.T) {
	client := fake.NewClientset()
	r := New(client, Options{})
	req := spotReq()
	req.Node = "n1"
	d := r.Wrap(scripted{observe: r.Observe, rep: drain.Report{Node: req.Node, Done: true}, events: []drain.Event{
		{Type: drain.EventBlocked, Node: "n1", Pod: "shop/db-0", Detail: "Cannot evict pod"},
		{Type: drain.EventDeleted, Node: "n1", Pod: "shop/db-1", GraceSeconds: 4},
		{Type: drain.EventFailed, Node: "n1", Pod: "shop/job-1", Detail: "forbidden"},
		{Type: drain.EventCordoned, Node: "n1", Pod: "shop/ignored"},
		{Type: drain.EventEvicted, Node: "n1"}, // no pod: nothing to write on
	}})
	if _, err := d.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := events(t, client, "shop")
	want := map[string]string{
		ReasonDrainBlocked: "Eviction from node n1 refused by a PodDisruptionBudget; Drainpipe keeps retrying " +
			"(instance deadline 2026-11-20T10:02:00Z): Cannot evict pod",
		ReasonDeletedAtDeadline: "Deleted from node n1 with 4 s grace: a PodDisruptionBudget still blocked its eviction " +
			"and the instance goes (instance deadline 2026-11-20T10:02:00Z)",
		ReasonEvictionRefused: "Eviction from node n1 refused: forbidden",
	}
	if len(got) != len(want) {
		t.Errorf("pod events %v, want only %v", got, want)
	}
	for reason, msg := range want {
		e, ok := got[reason]
		if !ok || e.Message != msg {
			t.Errorf("%s event message %q, want %q", reason, e.Message, msg)
		}
	}
	if e := got[ReasonEvictionRefused]; e.Type != corev1.EventTypeWarning || e.InvolvedObject.Name != "job-1" || e.InvolvedObject.Namespace != "shop" {
		t.Errorf("refusal event %+v", e)
	}
}

// A redelivered interruption refreshes its events (message, last time)
// instead of adding new ones.
func TestRedeliveryRefreshesTheEvent(t *testing.T) {
	client := fake.NewClientset()
	r := New(client, Options{})
	first := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	r.now = func() time.Time { return first }
	req := spotReq()
	req.Evict = false
	run := func() {
		if _, err := r.Wrap(scripted{rep: drain.Report{Done: true}}).Run(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	run()
	r.now = func() time.Time { return first.Add(time.Minute) }
	req.Evict = true
	run()
	got := events(t, client, "default")
	if len(got) != 2 {
		t.Fatalf("node events %v, want the start event and Drained", got)
	}
	e := got[ReasonSpotInterruption]
	if e.Count != 1 || !e.FirstTimestamp.Time.Equal(first) || !e.LastTimestamp.Time.Equal(first.Add(time.Minute)) ||
		!strings.HasPrefix(e.Message, "Cordoning and draining") {
		t.Errorf("start event after the redelivery: count %d, first %v, last %v, message %q; want count 1, first %v, last a minute later, the new message",
			e.Count, e.FirstTimestamp, e.LastTimestamp, e.Message, first)
	}
}

func TestRefreshFailureIsReported(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("patch", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("etcd is on fire")
	})
	var errs []error
	r := New(client, Options{OnError: func(err error) { errs = append(errs, err) }})
	req := spotReq()
	req.Evict = false
	for range 2 {
		if _, err := r.Wrap(scripted{rep: drain.Report{Done: true}}).Run(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "refreshing event default/") || !strings.Contains(errs[0].Error(), "etcd is on fire") {
		t.Errorf("errors %v, want the one failed refresh", errs)
	}
}

// A message longer than the events API takes is cut to its limit.
func TestLongMessagesAreCut(t *testing.T) {
	client := fake.NewClientset()
	r := New(client, Options{})
	req := spotReq()
	req.Evict = false
	long := strings.Repeat("x", 2000)
	d := r.Wrap(scripted{observe: r.Observe, rep: drain.Report{Done: true}, events: []drain.Event{
		{Type: drain.EventFailed, Node: req.Node, Pod: "shop/job-1", Detail: long},
	}})
	if _, err := d.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if e := events(t, client, "shop")[ReasonEvictionRefused]; len(e.Message) != maxMessage {
		t.Errorf("message of %d characters, want %d", len(e.Message), maxMessage)
	}
}

// The drain's own error comes back unchanged, and no outcome is told.
func TestFailedRunWritesNoOutcome(t *testing.T) {
	client := fake.NewClientset()
	r := New(client, Options{})
	boom := errors.New("node gone")
	_, err := r.Wrap(scripted{rep: drain.Report{Done: true}, err: boom}).Run(context.Background(), spotReq())
	if !errors.Is(err, boom) {
		t.Fatalf("Run error %v, want %v", err, boom)
	}
	if n := countCreates(client); n != 0 {
		t.Errorf("%d events written for a drain that failed before its cordon", n)
	}
}

// When the batch's gate refuses a cordon-only run, the cordon is given
// back and no event tells of it.
func TestRefusedGateWritesNoEvent(t *testing.T) {
	client := fake.NewClientset()
	r := New(client, Options{})
	req := spotReq()
	req.Evict = false
	req.AfterCordon = func(context.Context) error { return errors.New("the batch gave up") }
	if _, err := r.Wrap(scripted{rep: drain.Report{Done: true}}).Run(context.Background(), req); err != nil {
		t.Fatalf("Run error %v, want none: the cordon is given back", err)
	}
	if n := countCreates(client); n != 0 {
		t.Errorf("%d events written for a cordon given back", n)
	}
}

// gated is a Drainer that passes its AfterCordon and returns its error.
type gated struct{ err error }

func (g gated) Run(ctx context.Context, req drain.Request) (drain.Report, error) {
	if err := req.AfterCordon(ctx); err != nil {
		return drain.Report{}, err
	}
	return drain.Report{Done: true}, g.err
}

// A drain whose gate refuses starts no drain, and the start event is not
// written.
func TestRefusedGateInsideTheDrain(t *testing.T) {
	client := fake.NewClientset()
	r := New(client, Options{})
	req := spotReq()
	refused := errors.New("the batch gave up")
	calls := 0
	req.AfterCordon = func(context.Context) error { calls++; return refused }
	if _, err := r.Wrap(gated{}).Run(context.Background(), req); !errors.Is(err, refused) {
		t.Fatalf("Run error %v, want the gate's", err)
	}
	if calls != 1 || countCreates(client) != 0 {
		t.Errorf("gate called %d times, %d events written; want once, none", calls, countCreates(client))
	}
}

// Announce warns only the pods of a wrapped run, within
// Options.MaxPodEvents, and reports a failed write.
func TestAnnounceLimits(t *testing.T) {
	client := fake.NewClientset()
	var failed atomic.Int64
	fail := atomic.Bool{}
	client.PrependReactor("create", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if fail.Load() {
			return true, nil, errors.New("etcd is on fire")
		}
		return false, nil, nil
	})
	var logs bytes.Buffer
	r := New(client, Options{MaxPodEvents: 1, OnError: func(error) { failed.Add(1) },
		Log: slog.New(slog.NewTextHandler(&logs, nil))})
	req := spotReq()
	r.Announce(context.Background(), drain.Event{Node: req.Node, Pod: "shop/web-0"}) // no run
	if n := countCreates(client); n != 0 {
		t.Fatalf("%d events written outside a run", n)
	}
	d := announcer{r: r, then: func() {
		r.Announce(context.Background(), drain.Event{Node: req.Node}) // no pod
		fail.Store(true)
		r.Announce(context.Background(), drain.Event{Node: req.Node, Pod: "shop/web-1"})
		fail.Store(false)
		r.Announce(context.Background(), drain.Event{Node: req.Node, Pod: "shop/web-2"}) // over the cap
	}}
	req.Evict = false
	if _, err := r.Wrap(d).Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got := events(t, client, "shop"); len(got) != 0 {
		t.Errorf("pod events %v, want none (one failed, one over the cap)", got)
	}
	if failed.Load() != 1 || !strings.Contains(logs.String(), "Pod/web-1") {
		t.Errorf("%d failures counted, log %q; want the failed notice counted and logged", failed.Load(), logs.String())
	}
	if !strings.Contains(logs.String(), "dropped=1") {
		t.Errorf("log %q, want the dropped pod event counted", logs.String())
	}
}

type announcer struct {
	r    *Recorder
	then func()
}

func (a announcer) Run(ctx context.Context, req drain.Request) (drain.Report, error) {
	a.then()
	return drain.Report{Done: true}, nil
}

// Announce returns when its caller gives up, though the start event was
// never written.
func TestAnnounceStopsWithItsCaller(t *testing.T) {
	client := fake.NewClientset()
	release := make(chan struct{})
	client.PrependReactor("create", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetNamespace() == nodeEventNamespace {
			<-release
		}
		return false, nil, nil
	})
	r := New(client, Options{Timeout: time.Hour, Flush: time.Millisecond})
	req := spotReq()
	ctx, cancel := context.WithCancel(context.Background())
	d := announcer{r: r, then: func() {
		r.session(req.Node).start()
		cancel()
		r.Announce(ctx, drain.Event{Node: req.Node, Pod: "shop/web-1"})
	}}
	_, err := r.Wrap(d).Run(context.Background(), req)
	close(release)
	if err != nil {
		t.Fatal(err)
	}
}

type untouching struct {
	scripted
	called bool
}

func (u *untouching) CordonUntouched(context.Context, drain.Request, drain.Untouched, *slog.Logger) (*corev1.Node, error) {
	u.called = true
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, nil
}

// An unread cordon goes to the wrapped drainer when it can, and is
// refused with drain.ErrTouched when it cannot.
func TestCordonUntouched(t *testing.T) {
	r := New(fake.NewClientset(), Options{})
	u := &untouching{}
	w := r.Wrap(u).(wrapped)
	n, err := w.CordonUntouched(context.Background(), spotReq(), drain.Untouched{}, nil)
	if err != nil || n == nil || n.Name != "n1" || !u.called {
		t.Errorf("CordonUntouched = %v, %v (called %v), want the drainer's node", n, err, u.called)
	}
	plain := r.Wrap(scripted{}).(wrapped)
	if _, err := plain.CordonUntouched(context.Background(), spotReq(), drain.Untouched{}, nil); !errors.Is(err, drain.ErrTouched) {
		t.Errorf("CordonUntouched through a drainer without it: %v, want drain.ErrTouched", err)
	}
}

// A second run on the node replaces the first's session; the first's end
// leaves the second's in place.
func TestEndKeepsALaterSession(t *testing.T) {
	r := New(fake.NewClientset(), Options{})
	a := r.begin(context.Background(), drain.Request{Node: "n1"})
	b := r.begin(context.Background(), drain.Request{Node: "n1"})
	r.end(a)
	if r.session("n1") != b {
		t.Error("the first run's end removed the second run's session")
	}
	r.end(b)
	if r.session("n1") != nil {
		t.Error("session kept after its run ended")
	}
}

// A run that dropped no pod event says nothing of drops.
func TestNoDropsNoDropLog(t *testing.T) {
	var logs bytes.Buffer
	r := New(fake.NewClientset(), Options{MaxPodEvents: 1, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	req := spotReq()
	d := r.Wrap(scripted{observe: r.Observe, rep: drain.Report{Done: true}, events: []drain.Event{
		{Type: drain.EventEvicted, Node: req.Node, Pod: "shop/web-1", GraceSeconds: -1},
	}})
	if _, err := d.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "dropped") {
		t.Errorf("log %q tells of drops in a run within the cap", logs.String())
	}
}
