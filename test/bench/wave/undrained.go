package main

import (
	"context"
	"encoding/json"
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/fleet"
)

// undrainedLine is one JSON line of -v for a node a run left undrained:
// what the API server holds on it now beside what the observer's watch
// last saw, so a tail is told apart from a watch that missed an event.
type undrainedLine struct {
	Time      string   `json:"time"`
	Msg       string   `json:"msg"`
	Node      string   `json:"node"`
	Spot      bool     `json:"spot"`
	Hooked    bool     `json:"hooked"`
	Cordoned  float64  `json:"cordoned_s"`
	Watched   int      `json:"watched_evictable"`
	Evictable []string `json:"evictable,omitempty"` // name phase
	Error     string   `json:"error,omitempty"`
}

// reportUndrained writes an undrainedLine per target node the observer
// never saw drained.
func reportUndrained(ctx context.Context, w io.Writer, admin kubernetes.Interface, f *fleet.Fleet, obs *fleet.Observer) {
	times := obs.Times()
	enc := json.NewEncoder(w)
	for _, n := range f.Targets() {
		t := times[n.Name]
		if t.Drained != 0 {
			continue
		}
		l := undrainedLine{
			Time: time.Now().UTC().Format(time.RFC3339Nano), Msg: "bench: undrained node", Node: n.Name,
			Spot: n.Spot, Hooked: n.Hook != nil, Cordoned: t.Cordoned.Seconds(), Watched: obs.EvictableOn(n.Name),
		}
		pods, err := admin.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("spec.nodeName", n.Name).String(),
		})
		if err != nil {
			l.Error = err.Error()
		} else {
			for i := range pods.Items {
				if p := &pods.Items[i]; fleet.Evictable(p) {
					l.Evictable = append(l.Evictable, p.Name+" "+string(p.Status.Phase))
				}
			}
		}
		_ = enc.Encode(l)
	}
}
