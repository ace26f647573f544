package kevents

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/drainpipe/drainpipe/internal/drain"
)

// scripted is a Drainer that reports its events to observe and returns rep.
type scripted struct {
	events  []drain.Event
	observe func(drain.Event)
	rep     drain.Report
	err     error
}

func (s scripted) Run(context.Context, drain.Request) (drain.Report, error) {
	for _, e := range s.events {
		s.observe(e)
	}
	return s.rep, s.err
}

var deadline = time.Date(2026, 11, 20, 10, 2, 0, 0, time.UTC)

func spotReq() drain.Request {
	return drain.Request{Node: "ip-10-0-1-23.eu-west-1.compute.internal", Kind: "spot-interruption", EventID: "ev-1",
		Deadline: deadline, Evict: true}
}

func TestRunWritesNodeAndPodEvents(t *testing.T) {
	client := fake.NewClientset()
	r := New(client, Options{})
	req := spotReq()
	d := r.Wrap(scripted{observe: r.Observe, rep: drain.Report{Node: req.Node, Evicted: []string{"shop/web-1"}, Done: true},
		events: []drain.Event{
			{Type: drain.EventCordoned, Node: req.Node},
			{Type: drain.EventEvicted, Node: req.Node, Pod: "shop/web-1", PodUID: "uid-1", GraceSeconds: -1},
			{Type: drain.EventBlocked, Node: req.Node, Pod: "shop/db-0", PodUID: "uid-2", Detail: "Cannot evict pod"},
			{Type: drain.EventGone, Node: req.Node, Pod: "shop/web-1", PodUID: "uid-1"},
			{Type: drain.EventDeleted, Node: req.Node, Pod: "shop/db-1", PodUID: "uid-3", GraceSeconds: 4},
		}})
	if _, err := d.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, ns := range []string{"default", "shop"} {
		list, err := client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range list.Items {
			key := e.InvolvedObject.Kind + " " + e.InvolvedObject.Name + " " + string(e.InvolvedObject.UID)
			got[key] = append(got[key], e.Type+"/"+e.Reason)
			if e.Source.Component != "drainpipe" || e.Count != 1 || e.Message == "" {
				t.Errorf("event %s: source %q count %d message %q", e.Name, e.Source.Component, e.Count, e.Message)
			}
		}
	}
	want := map[string][]string{
		"Node " + req.Node + " " + req.Node: {"Normal/Drained", "Normal/SpotInterruption"},
		"Pod web-1 uid-1":                   {"Normal/SpotInterruption"},
		"Pod db-0 uid-2":                    {"Warning/DrainBlocked"},
		"Pod db-1 uid-3":                    {"Warning/DeletedAtDeadline"},
	}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("events by object (-want +got):\n%s", diff)
	}
}

func TestFailingWritesNeverFailTheDrain(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("create", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("etcd is on fire")
	})
	var failures atomic.Int64
	r := New(client, Options{OnError: func(error) { failures.Add(1) }})
	req := spotReq()
	want := drain.Report{Node: req.Node, BlockedByPDB: []string{"shop/db-0"}}
	d := r.Wrap(scripted{observe: r.Observe, rep: want, events: []drain.Event{
		{Type: drain.EventEvicted, Node: req.Node, Pod: "shop/web-1", PodUID: "uid-1", GraceSeconds: -1},
	}})
	got, err := d.Run(context.Background(), req)
	if err != nil {
		t.Fatalf("Run error %v, want the drain's own result", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	// Start, DrainBlocked and one pod event: all failed, all counted.
	if n := failures.Load(); n != 3 {
		t.Errorf("OnError called %d times, want 3", n)
	}
}

func TestSlowWritesAreBounded(t *testing.T) {
	client := fake.NewClientset()
	release := make(chan struct{})
	defer close(release)
	client.PrependReactor("create", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		<-release // an API server that never answers
		return true, nil, errors.New("too late")
	})
	r := New(client, Options{Flush: 50 * time.Millisecond})
	done := make(chan error, 1)
	go func() {
		_, err := r.Wrap(scripted{observe: r.Observe, rep: drain.Report{Done: true}}).Run(context.Background(), spotReq())
		done <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("Run waited for an event write that never ends")
	}
}

func TestPodEventsAreCapped(t *testing.T) {
	client := fake.NewClientset()
	var creates atomic.Int64
	client.PrependReactor("create", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		creates.Add(1)
		return false, nil, nil
	})
	r := New(client, Options{MaxPodEvents: 2})
	req := spotReq()
	var evs []drain.Event
	for _, p := range []string{"a/1", "a/2", "a/3", "a/4"} {
		evs = append(evs, drain.Event{Type: drain.EventEvicted, Node: req.Node, Pod: p, GraceSeconds: -1})
	}
	req.Evict = false // a cordon: no outcome event
	if _, err := r.Wrap(scripted{observe: r.Observe, events: evs, rep: drain.Report{Done: true}}).Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if n := creates.Load(); n != 3 { // the node's start event and two pods
		t.Errorf("%d events created, want 3", n)
	}
}

func TestReason(t *testing.T) {
	tests := map[string]string{
		"spot-interruption":                 ReasonSpotInterruption,
		"rebalance-recommendation":          ReasonRebalanceRecommendation,
		"scheduled-change":                  ReasonScheduledMaintenance,
		"asg-lifecycle":                     ReasonLifecycleTermination,
		"state-change":                      ReasonInstanceStateChange,
		"capacity-reservation-interruption": ReasonCapacityReservationInterruption,
		"capacity-block-expiry":             ReasonCapacityBlockExpiry,
		"something-new":                     ReasonInterruption,
	}
	for kind, want := range tests {
		if got := Reason(kind); got != want {
			t.Errorf("Reason(%q) = %q, want %q", kind, got, want)
		}
	}
}

func TestEventNameIsStableAndValid(t *testing.T) {
	long := corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: strings.Repeat("p", 253)}
	a, b := eventName(long, "Drained", "ev-1"), eventName(long, "Drained", "ev-1")
	if a != b || len(a) > 253 {
		t.Errorf("eventName = %q (%d chars) then %q; want stable and at most 253", a, len(a), b)
	}
	if eventName(long, "Drained", "ev-2") == a {
		t.Error("two interruptions share an event name")
	}
}

// announcing is a Drainer that cordons (passing AfterCordon, as
// drain.Drainer does before it evicts), announces one pod and, right
// after, reads which events exist: Announce must have written the pod's
// and the node's before it returns.
type announcing struct {
	r      *Recorder
	client *fake.Clientset
	seen   []string
}

func (a *announcing) Run(ctx context.Context, req drain.Request) (drain.Report, error) {
	req.AfterCordon(ctx)
	a.r.Announce(ctx, drain.Event{Type: drain.EventNotice, Node: req.Node, Pod: "shop/web-1", PodUID: "uid-1",
		Detail: `{"kind":"spot-interruption","evictAt":"2026-11-20T10:01:00Z"}`})
	for _, ns := range []string{"default", "shop"} {
		list, err := a.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return drain.Report{}, err
		}
		for _, e := range list.Items {
			a.seen = append(a.seen, e.InvolvedObject.Kind+"/"+e.Reason+": "+e.Message)
		}
	}
	return drain.Report{Node: req.Node, Done: true}, nil
}

func TestAnnounceWritesBeforeReturning(t *testing.T) {
	client := fake.NewClientset()
	r := New(client, Options{})
	a := &announcing{r: r, client: client}
	if _, err := r.Wrap(a).Run(context.Background(), spotReq()); err != nil {
		t.Fatal(err)
	}
	var pod, node bool
	for _, s := range a.seen {
		pod = pod || strings.HasPrefix(s, "Pod/"+ReasonInterruptionNotice) && strings.Contains(s, "evicted at 2026-11-20T10:01:00Z")
		node = node || strings.HasPrefix(s, "Node/"+ReasonSpotInterruption)
	}
	if !pod || !node {
		t.Errorf("events when Announce returned: %q; want the pod's notice (with its eviction time) and the node's start", a.seen)
	}
}

// cordoning is a Drainer that notes whether the node's start event was
// begun when it cordons and once it passes its AfterCordon, as
// drain.Drainer calls it (evicting runs only).
type cordoning struct {
	r                   *Recorder
	atCordon, afterGate bool
}

func (c *cordoning) Run(ctx context.Context, req drain.Request) (drain.Report, error) {
	c.atCordon = c.r.session(req.Node).startedChan() != nil
	if req.Evict && req.AfterCordon != nil {
		req.AfterCordon(ctx)
		c.afterGate = c.r.session(req.Node).startedChan() != nil
	}
	return drain.Report{Node: req.Node, Done: true}, nil
}

// A wave's last cordons waited behind its first nodes' event writes: the
// node's start event is written once the node is cordoned and the
// batch's gate has opened, never before, whether the drain evicts (the
// drain passes the gate) or only cordons (the wrapper passes it).
func TestStartEventFollowsTheCordon(t *testing.T) {
	for _, evict := range []bool{true, false} {
		client := fake.NewClientset()
		r := New(client, Options{})
		c := &cordoning{r: r}
		req := spotReq()
		req.Evict = evict
		gated, startedAtGate := 0, false
		req.AfterCordon = func(context.Context) error {
			gated++
			startedAtGate = r.session(req.Node).startedChan() != nil
			return nil
		}
		if _, err := r.Wrap(c).Run(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if c.atCordon {
			t.Errorf("evict %v: the node's start event was begun before the cordon", evict)
		}
		if gated != 1 || startedAtGate {
			t.Errorf("evict %v: the caller's gate called %d times, the start event begun before it %v; want once, and not", evict, gated, startedAtGate)
		}
		if evict && !c.afterGate {
			t.Errorf("evict %v: start event not begun once the drain passed the gate", evict)
		}
		list, err := client.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var reasons []string
		for _, e := range list.Items {
			reasons = append(reasons, e.Reason)
		}
		if !slices.Contains(reasons, ReasonSpotInterruption) {
			t.Errorf("evict %v: node events %q, want the start event (%s)", evict, reasons, ReasonSpotInterruption)
		}
	}
}

// Event writes take a seat of the instance's pace after the evictions:
// while every seat is held, no event reaches the API server (each write
// gives up at its timeout, counted as a failed write); once seats free,
// they are written.
func TestEventsWaitForASeat(t *testing.T) {
	pace := drain.NewPace(1, 1) // two seats
	var held []func()
	for range 2 {
		release, err := pace.Seat(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, release)
	}
	client := fake.NewClientset()
	var failed atomic.Int64
	r := New(client, Options{Pace: pace, Timeout: 50 * time.Millisecond, OnError: func(error) { failed.Add(1) }})
	req := spotReq()
	events := []drain.Event{
		{Type: drain.EventCordoned, Node: req.Node},
		{Type: drain.EventEvicted, Node: req.Node, Pod: "shop/web-1", PodUID: "uid-1", GraceSeconds: -1},
	}
	d := r.Wrap(scripted{observe: r.Observe, rep: drain.Report{Node: req.Node, Evicted: []string{"shop/web-1"}, Done: true}, events: events})
	if _, err := d.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if n := countCreates(client); n != 0 {
		t.Errorf("%d events written while every seat was held", n)
	}
	if failed.Load() == 0 {
		t.Error("no write counted as failed")
	}
	for _, release := range held {
		release()
	}
	if _, err := d.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if n := countCreates(client); n == 0 {
		t.Error("no event written once the seats were free")
	}
}

func countCreates(c *fake.Clientset) int {
	n := 0
	for _, a := range c.Actions() {
		if a.GetVerb() == "create" && a.GetResource().Resource == "events" {
			n++
		}
	}
	return n
}
