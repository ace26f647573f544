package drain

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// A drain racing a deadline says on its node, as soon as every pod's
// eviction is accepted, that it needs no more of the cluster's rate
// (state evicted), while it waits for the pods to go: the wave's drains
// that can wait go on from then, not after the pods' grace periods.
func TestDrainSaysEveryPodEvictedBeforeThePodsGo(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	web, api := pod("web", ownedBy("ReplicaSet", "rs")), pod("api", ownedBy("ReplicaSet", "rs2"))
	client := fake.NewClientset(node, &web, &api)
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return a.GetSubresource() == "eviction", nil, nil // accepted; the pods stay while their grace runs
	})
	sent := make(chan struct{}, 1)
	client.PrependReactor("patch", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		var p struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		var s Summary
		if json.Unmarshal(a.(k8stesting.PatchAction).GetPatch(), &p) == nil && p.Metadata.Annotations[AnnotationReport] != "" &&
			json.Unmarshal([]byte(p.Metadata.Annotations[AnnotationReport]), &s) == nil && s.State == reportEvicted && s.Evicted == 2 {
			select {
			case sent <- struct{}{}:
			default:
			}
		}
		return false, nil, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	d := New(client, DefaultConfig(), slog.New(slog.DiscardHandler))
	go func() {
		_, err := d.Run(ctx, Request{Node: "n1", Kind: "spot-interruption", Evict: true, Deadline: time.Now().Add(30 * time.Second)})
		ran <- err
	}()
	select {
	case <-sent:
	case err := <-ran:
		t.Fatalf("the drain ended (%v) without saying every pod was evicted while the pods were still there", err)
	}
	cancel()
	<-ran
}

// A failed write of the every-pod-evicted report is logged while the Run
// goes on; once the Run has ended, its final report follows and the cut
// write is no news.
func TestMarkSentLogsAFailedWriteWhileTheRunGoesOn(t *testing.T) {
	const msg = "drain report (every pod evicted) not written"
	for _, ended := range []bool{false, true} {
		client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
		client.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, errors.New("connection reset by peer")
		})
		var l debugLog
		r := &run{d: New(client, DefaultConfig(), nil), log: l.logger(), req: Request{Node: "n1", Kind: "spot-interruption"},
			changed: make(chan struct{}), targets: map[string]*target{"ns/a": {key: "ns/a", state: stateEvicted}}}
		ctx, cancel := context.WithCancel(t.Context())
		if ended {
			cancel()
		}
		r.markSent(ctx)
		cancel()
		want := 1
		if ended {
			want = 0
		}
		if n := len(l.records(t, msg)); n != want {
			t.Errorf("Run ended %v: %q logged %d times, want %d", ended, msg, n, want)
		}
	}
}
