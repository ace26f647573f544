package drain

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// A Run again on a node its drain has emptied finds nothing to evict and
// writes nothing: the report kept says done already. A pod that was
// blocked in an earlier Run and has gone since blocks nothing now.
func TestRerunOfAFinishedDrainWritesNothing(t *testing.T) {
	first := time.Date(2026, 11, 22, 11, 59, 0, 0, time.UTC)
	kept := Summary{Kind: "spot-interruption", EventID: "ev-1", State: "done", Started: first, Runs: 1,
		Blocked: []Block{{Pod: "ns/gone", First: first, Last: first, Refusals: 1}}}
	node := reportedNode(t, kept)
	client := fake.NewClientset(node)
	d := New(client, DefaultConfig(), slog.New(slog.DiscardHandler))
	rep, err := d.Run(context.Background(), Request{Node: "n1", Kind: "spot-interruption", EventID: "ev-1", Evict: true,
		Read: node.DeepCopy(), Cordoned: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !rep.Done || !rep.BlockedSince.IsZero() {
		t.Errorf("report %+v, want done, blocked since never", rep)
	}
	for _, a := range client.Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			t.Errorf("request %s %s sent, want only reads", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

// A Run that stops while a budget blocks a pod says since when the drain
// has been blocked.
func TestBlockedRunSaysSinceWhen(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	p := pod("p", ownedBy("ReplicaSet", "rs"))
	client := fake.NewClientset(node, &p)
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		return true, nil, budgetRefused()
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := DefaultConfig()
	cfg.OnEvent = func(e Event) {
		if e.Type == EventBlocked {
			cancel() // the Run stops while the pod is blocked
		}
	}
	d := New(client, cfg, slog.New(slog.DiscardHandler))
	d.now = func() time.Time { return now }
	rep, err := d.Run(ctx, Request{Node: "n1", Kind: "spot-interruption", Evict: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(rep.BlockedByPDB) != 1 || !rep.BlockedSince.Equal(now) {
		t.Errorf("blocked %v since %v, want [ns/p] since %v", rep.BlockedByPDB, rep.BlockedSince, now)
	}
}

// reportedNode is node n1, cordoned earlier, keeping report kept.
func reportedNode(t *testing.T, kept Summary) *corev1.Node {
	t.Helper()
	raw, err := json.Marshal(kept)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", ResourceVersion: "7",
		Annotations: map[string]string{AnnotationReport: string(raw)}}}
}
