package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// A batch that gives way leaves none of its pods unsent: the drain stops
// retrying and waiting, but every pod it was evicting gets its eviction
// first (one in flight at a time here), since an eviction sent goes on
// after the invocation ends while the record waits for an environment.
// The batch gives way as the first eviction is sent.
func TestGivingWayLeavesNoPodUnsent(t *testing.T) {
	const pods = 12
	objs := []runtime.Object{&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName},
		Spec:   corev1.NodeSpec{ProviderID: "aws:///eu-west-1a/" + instID},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}}
	isController := true
	for i := range pods {
		objs = append(objs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Namespace: "shop",
			UID: types.UID(fmt.Sprint("uid-", i)), OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet",
				Name: "web", UID: "rs", Controller: &isController}}},
			Spec: corev1.PodSpec{NodeName: nodeName}, Status: corev1.PodStatus{Phase: corev1.PodRunning}})
	}
	client := fake.NewClientset(objs...)
	yield, give := context.WithCancelCause(context.Background())
	defer give(nil)
	var mu sync.Mutex
	evicted := map[string]int{}
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		mu.Lock()
		defer mu.Unlock()
		evicted[a.(k8stesting.CreateAction).GetObject().(interface{ GetName() string }).GetName()]++
		give(handler.ErrGaveWay) // the batch gives way as its first eviction goes out
		return true, nil, nil    // accepted; the pod stays while its grace runs
	})

	now := time.Now()
	cfg := drain.DefaultConfig()
	cfg.Concurrency = 1
	logs := &syncWriter{w: &bytes.Buffer{}}
	a, err := New(Config{LaunchPoll: time.Millisecond}, Deps{
		Instances: &fakeInstances{known: map[string]instance.Instance{instID: ourInstance()}},
		Clusters:  fakeClusters{client: client}, FindNode: finder(map[string]string{instID: nodeName}, nil),
		NewDrainer: func(k kubernetes.Interface) Drainer {
			return drain.New(k, cfg, slog.New(slog.NewJSONHandler(logs, nil)))
		},
		Hooks: &modelHooks{completed: map[string]bool{}}, Recorder: NopRecorder{}, Clock: &fakeClock{now: now},
		Log: slog.New(slog.NewJSONHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(handler.WithYield(context.Background(), yield), time.Minute)
	defer cancel()
	res := a.Act(ctx, task(policy.ActionCordonAndDrain, 1, spot(now)))
	if res.Status != handler.StatusRetry || !strings.Contains(res.Reason, "gave way") {
		t.Errorf("Act = %+v, want a retry saying the batch gave way", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(evicted) != pods {
		t.Errorf("%d of %d pods sent their eviction before the batch gave way (%v): the rest wait a whole delivery", len(evicted), pods, evicted)
	}
	for p, n := range evicted {
		if n != 1 {
			t.Errorf("pod %s evicted %d times after the batch gave way, want once", p, n)
		}
	}
}
