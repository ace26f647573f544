package drain_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// podHistory follows the namespace's pods and returns, once the watch is
// stopped, each event in the API server's order.
func podHistory(t *testing.T, ctx context.Context, s *scene) func() []watch.Event {
	t.Helper()
	w, err := s.client.CoreV1().Pods(s.env.Namespace).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watching pods: %v", err)
	}
	done := make(chan []watch.Event)
	go func() {
		var evs []watch.Event
		for ev := range w.ResultChan() {
			evs = append(evs, ev)
		}
		done <- evs
	}()
	return func() []watch.Event { w.Stop(); return <-done }
}

// Every pod to be evicted, and the node, carry the warning before the
// first eviction, and the Announce hook hears of each pod first too.
func TestWarningPrecedesTheFirstEviction(t *testing.T) {
	cfg := drain.DefaultConfig()
	cfg.WarnAll = true
	s, d := newScene(t, withAnnounce(cfg, func(e drain.Event) {}))
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	n := s.env.Node(ctx, fixture.NodeOptions{})
	for i := range 5 {
		s.env.Pod(ctx, fmt.Sprintf("p%d", i), fixture.BoundTo(n.Name))
	}
	history := podHistory(t, ctx, s)
	deadline := time.Now().Add(2 * time.Minute).Truncate(time.Second)
	rep, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "spot-interruption", EventID: "ev-1", Evict: true, Deadline: deadline})
	if err != nil || !rep.Done {
		t.Fatalf("Run = %+v, %v; want done", rep, err)
	}
	want := fmt.Sprintf(`{"kind":"spot-interruption","deadline":"%s","eventId":"ev-1"}`, deadline.UTC().Format(time.RFC3339))
	warned := map[string]bool{}
	for _, ev := range history() {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			continue
		}
		if p.DeletionTimestamp != nil {
			if len(warned) != 5 {
				t.Fatalf("first eviction (%s) seen when only %d of 5 pods carried the warning", p.Name, len(warned))
			}
			break
		}
		if got := p.Annotations[drain.AnnotationInterruption]; got != "" {
			if got != want {
				t.Errorf("pod %s annotation = %s, want %s", p.Name, got, want)
			}
			warned[p.Name] = true
		}
	}
	if len(warned) != 5 {
		t.Errorf("%d pods warned, want 5", len(warned))
	}
	first := s.events.index(drain.EventEvicted, "")
	for i := range 5 {
		if at := s.events.index(drain.EventNotice, s.key(fmt.Sprintf("p%d", i))); at < 0 || (first >= 0 && at > first) {
			t.Errorf("announce of p%d at %d, first eviction at %d: want it announced before", i, at, first)
		}
	}
	node, err := s.client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting node: %v", err)
	}
	if got := node.Annotations[drain.AnnotationInterruption]; got != want {
		t.Errorf("node annotation = %s, want %s", got, want)
	}
}

// A pod that asked for notice is evicted no sooner than its annotation
// says, and the others do not wait for it.
func TestNoticePeriodDelaysOnlyThePodsThatAskForIt(t *testing.T) {
	cfg := drain.DefaultConfig()
	cfg.NoticePeriod = 2 * time.Second
	s, d := newScene(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	n := s.env.Node(ctx, fixture.NodeOptions{})
	asks := s.env.Pod(ctx, "asks", fixture.BoundTo(n.Name), fixture.Annotations(map[string]string{drain.AnnotationNotice: "true"}))
	plain := s.env.Pod(ctx, "plain", fixture.BoundTo(n.Name))
	var evictAt time.Time
	s.events.onEvent(func(e drain.Event) {
		// Read while the pod still waits for its notice: once evicted it
		// may be gone before this runs.
		if e.Type == drain.EventEvicted && e.Pod == s.key(plain.Name) && evictAt.IsZero() {
			p, err := s.client.CoreV1().Pods(asks.Namespace).Get(ctx, asks.Name, metav1.GetOptions{})
			if err == nil {
				in, _ := drain.ParseInterruption(p.Annotations[drain.AnnotationInterruption])
				evictAt, _ = time.Parse(time.RFC3339, in.EvictAt)
			}
		}
	})
	rep, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "asg-lifecycle", EventID: "ev-2", Evict: true})
	if err != nil || !rep.Done {
		t.Fatalf("Run = %+v, %v; want done", rep, err)
	}
	ev, ok := s.events.first(drain.EventEvicted, s.key(asks.Name))
	if !ok || evictAt.IsZero() {
		t.Fatalf("eviction of %s: %v, evictAt %v; want both", asks.Name, ok, evictAt)
	}
	if ev.Time.Before(evictAt) {
		t.Errorf("%s evicted at %v, before its notice ended at %v", asks.Name, ev.Time, evictAt)
	}
	if p, a := s.events.index(drain.EventEvicted, s.key(plain.Name)), s.events.index(drain.EventEvicted, s.key(asks.Name)); p > a {
		t.Errorf("plain pod evicted at %d, after the one with notice at %d", p, a)
	}
}

// withAnnounce sets an Announce hook calling f (newScene logs its calls
// among the Run's events).
func withAnnounce(cfg drain.Config, f func(drain.Event)) drain.Config {
	cfg.Announce = func(_ context.Context, e drain.Event) { f(e) }
	return cfg
}
