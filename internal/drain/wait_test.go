package drain

import (
	"context"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// When the watch shows a target pod leaving the node, the Run marks it
// gone and reports it with an EventGone that names the pod and carries no
// grace (-1).
func TestPodLeavingTheNodeIsReportedGone(t *testing.T) {
	var events []Event
	cfg := DefaultConfig()
	cfg.OnEvent = func(e Event) { events = append(events, e) }
	d := New(nil, cfg, nil)
	now := time.Unix(1e9, 0)
	d.now = func() time.Time { return now }
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "u1"}}
	tg := &target{key: "shop/web", ns: "shop", name: "web", uid: "u1", gone: make(chan struct{})}
	r := &run{d: d, req: Request{Node: "n1"}, log: slog.New(slog.DiscardHandler), changed: make(chan struct{}),
		present: map[string]types.UID{"shop/web": "u1"}, targets: map[string]*target{"shop/web": tg}}
	r.observe(context.Background(), pod, false)
	select {
	case <-tg.gone:
	default:
		t.Fatal("the pod left the node but its target is not gone")
	}
	want := Event{Time: now, Type: EventGone, Node: "n1", Pod: "shop/web", PodUID: "u1", GraceSeconds: -1}
	if len(events) != 1 || events[0] != want {
		t.Errorf("events %+v, want only %+v", events, want)
	}
}
