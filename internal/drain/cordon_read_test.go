package drain

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// A node the caller read as CordonUntouched left it is cordoned already:
// the cordon sends nothing and returns the report the node keeps.
func TestCordonOfANodeReadCordonedSendsNothing(t *testing.T) {
	kept := Summary{Kind: "spot-interruption", EventID: "ev-1", State: "draining", Runs: 1}
	node := reportedNode(t, kept)
	client := fake.NewClientset(node)
	d := New(client, DefaultConfig(), nil)
	req := Request{Node: "n1", Kind: "spot-interruption", EventID: "ev-1", Read: node.DeepCopy(), Cordoned: true}
	got, err := d.cordon(context.Background(), req, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("cordon: %v", err)
	}
	if diff := cmp.Diff(kept, got); diff != "" {
		t.Errorf("report kept (-want +got):\n%s", diff)
	}
	if a := client.Actions(); len(a) != 0 {
		t.Errorf("requests %v, want none", a)
	}
}

// A stale copy's conflict costs no attempt: after it, the cordon still
// gets all its attempts against a node that keeps changing, backing off
// from the first backoff on. The node event it sends carries no grace.
func TestCordonKeepsItsAttemptsAfterAStaleRead(t *testing.T) {
	stale := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", ResourceVersion: "6"}}
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", ResourceVersion: "7"}})
	conflicts := 1 + cordonAttempts - 1 // the stale copy's, then all but the last attempt's
	client.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		if conflicts == 0 {
			return false, nil, nil
		}
		conflicts--
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, "n1", errors.New("the object has been modified"))
	})
	cfg := DefaultConfig()
	var events []Event
	cfg.OnEvent = func(e Event) { events = append(events, e) }
	d := New(client, cfg, nil)
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	d.now = func() time.Time { return now }
	var waits []time.Duration
	d.sleep = func(_ context.Context, w time.Duration) bool { waits = append(waits, w); return true }
	if _, err := d.cordon(context.Background(), Request{Node: "n1", Kind: "spot-interruption", Read: stale}, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("cordon: %v", err)
	}
	if len(waits) != cordonAttempts-1 || waits[0] > DefaultBackoffInitial {
		t.Errorf("waits %v, want %d, the first at most %v", waits, cordonAttempts-1, DefaultBackoffInitial)
	}
	want := []Event{{Time: now, Type: EventCordoned, Node: "n1", GraceSeconds: -1}}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
