package drain

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// A Run whose Yield ended before its first eviction (the batch gave way
// before any) cordons and sends nothing, with the yield's cause.
func TestYieldEndedBeforeTheFirstEvictionSendsNone(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	p := pod("web", ownedBy("ReplicaSet", "rs"))
	client := fake.NewClientset(node, &p)
	var evictions atomic.Int32
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "eviction" {
			evictions.Add(1)
		}
		return false, nil, nil
	})
	cause := errors.New("the batch gave way")
	yield, give := context.WithCancelCause(context.Background())
	give(cause)
	d := New(client, DefaultConfig(), slog.New(slog.DiscardHandler))
	rep, err := d.Run(context.Background(), Request{Node: "n1", Kind: "spot-interruption", Evict: true, Yield: yield})
	if !errors.Is(err, cause) || rep.Done {
		t.Errorf("Run = %+v, %v; want not done, with the yield's cause", rep, err)
	}
	if n := evictions.Load(); n != 0 {
		t.Errorf("%d evictions sent after the batch gave way before any", n)
	}
	got, err := client.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
	if err != nil || !got.Spec.Unschedulable {
		t.Errorf("node not cordoned (%v): the cordon comes before giving way", err)
	}
}
