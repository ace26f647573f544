package kevents

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/drainpipe/drainpipe/internal/drain"
)

// In a wave, a drain racing a deadline leaves its pods' Evicted events
// out and its node's closing event names those pods: at 500 nodes the
// per-pod events were 40% of Drainpipe's requests, written while the
// Spot drains waited for the API server. Warnings stay on their pods; a
// lone drain, and a drain that can wait, keep every pod event.
func TestWaveFoldsEvictedPodEvents(t *testing.T) {
	evicted := []string{"shop/web-1", "shop/web-2", "shop/web-3", "shop/web-4", "shop/web-5", "shop/web-6"}
	run := func(t *testing.T, crowded bool, req drain.Request) *fake.Clientset {
		t.Helper()
		client := fake.NewClientset()
		r := New(client, Options{Crowded: func() bool { return crowded }})
		var evs []drain.Event
		for _, p := range evicted {
			evs = append(evs, drain.Event{Type: drain.EventEvicted, Node: req.Node, Pod: p, GraceSeconds: -1})
		}
		evs = append(evs, drain.Event{Type: drain.EventBlocked, Node: req.Node, Pod: "shop/db-0", Detail: "Cannot evict pod"})
		d := r.Wrap(scripted{observe: r.Observe, events: evs, rep: drain.Report{Node: req.Node, Evicted: evicted, Done: true}})
		if _, err := d.Run(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		return client
	}
	spot := spotReq()
	hook := spotReq()
	hook.Kind, hook.Deadline = "asg-lifecycle-termination", time.Time{}

	t.Run("wave, racing a deadline", func(t *testing.T) {
		c := run(t, true, spot)
		pods := events(t, c, "shop")
		if _, ok := pods[Reason(spot.Kind)]; ok {
			t.Errorf("pod events %v: an Evicted pod event written in a wave, racing a deadline", pods)
		}
		if _, ok := pods[ReasonDrainBlocked]; !ok {
			t.Errorf("pod events %v: the DrainBlocked warning left out", pods)
		}
		msg := events(t, c, nodeEventNamespace)[ReasonDrained].Message
		for _, want := range []string{"6 pods evicted", "shop/web-1, shop/web-2", "and 1 more", "6 of their own events left out"} {
			if !strings.Contains(msg, want) {
				t.Errorf("Drained event %q lacks %q", msg, want)
			}
		}
	})
	t.Run("lone drain", func(t *testing.T) {
		c := run(t, false, spot)
		if _, ok := events(t, c, "shop")[Reason(spot.Kind)]; !ok {
			t.Error("a lone drain's Evicted pod events left out")
		}
		if msg := events(t, c, nodeEventNamespace)[ReasonDrained].Message; strings.Contains(msg, "left out") {
			t.Errorf("Drained event %q speaks of events left out", msg)
		}
	})
	t.Run("wave, a drain that can wait", func(t *testing.T) {
		c := run(t, true, hook)
		if _, ok := events(t, c, "shop")[Reason(hook.Kind)]; !ok {
			t.Error("a hook drain's Evicted pod events left out")
		}
	})
}
