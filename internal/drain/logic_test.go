package drain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

func pod(name string, opts ...func(*corev1.Pod)) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{NodeName: "n1"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, o := range opts {
		o(&p)
	}
	return p
}

func ownedBy(kind, name string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: kind, Name: name, Controller: ptr.To(true)}}
	}
}

func TestJudge(t *testing.T) {
	dsExists := func(_ context.Context, _, name string) (bool, error) {
		switch name {
		case "live":
			return true, nil
		case "broken":
			return false, errors.New("boom")
		}
		return false, nil
	}
	tests := []struct {
		name      string
		pod       corev1.Pod
		unmanaged bool
		want      verdict
	}{
		{"replicaset pod", pod("a", ownedBy("ReplicaSet", "rs")), true, verdict{act: actEvict}},
		{"mirror pod", pod("a", func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
		}), true, verdict{act: actSkip, reason: reasonMirror}},
		{"succeeded", pod("a", ownedBy("Job", "j"), func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }), true,
			verdict{act: actSkip, reason: reasonFinished}},
		{"failed", pod("a", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }), true,
			verdict{act: actSkip, reason: reasonFinished}},
		{"terminating", pod("a", ownedBy("ReplicaSet", "rs"), func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} }), true,
			verdict{act: actWait, reason: reasonTerminating}},
		{"daemonset pod", pod("a", ownedBy("DaemonSet", "live")), true, verdict{act: actSkip, reason: reasonDaemonSet}},
		{"orphaned daemonset pod", pod("a", ownedBy("DaemonSet", "deleted")), true,
			verdict{act: actEvict, reason: "no controller: nothing will recreate it", warn: true}},
		{"daemonset lookup failing", pod("a", ownedBy("DaemonSet", "broken")), true,
			verdict{act: actSkip, reason: "daemonset lookup failed: boom"}},
		{"bare pod evicted", pod("a"), true, verdict{act: actEvict, reason: "no controller: nothing will recreate it", warn: true}},
		{"bare pod kept", pod("a"), false, verdict{act: actSkip, reason: reasonUnmanaged}},
		{"emptyDir", pod("a", ownedBy("ReplicaSet", "rs"), func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}), true, verdict{act: actEvict, reason: "emptyDir data is lost with the instance"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := judge(context.Background(), &tt.pod, tt.unmanaged, dsExists)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(verdict{})); diff != "" {
				t.Errorf("judge() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanWaves(t *testing.T) {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ds"}}
	d := New(fake.NewClientset(ds), DefaultConfig(), nil)
	pods := []corev1.Pod{
		pod("critical", ownedBy("ReplicaSet", "rs"), func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](2000001000) }),
		pod("cluster-critical", ownedBy("ReplicaSet", "rs"), func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](2000000000) }),
		pod("high", ownedBy("ReplicaSet", "rs"), func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](1999999999) }),
		pod("plain", ownedBy("ReplicaSet", "rs")),
		pod("agent", ownedBy("DaemonSet", "ds")),
		pod("leaving", ownedBy("ReplicaSet", "rs"), func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} }),
	}
	p := d.plan(context.Background(), pods, slog.New(slog.DiscardHandler))
	keys := func(ts []*target) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.key)
		}
		return out
	}
	got := map[string][]string{
		"wave0":   keys(p.waves[0]),
		"wave1":   keys(p.waves[1]),
		"waiting": keys(p.waiting),
	}
	want := map[string][]string{
		"wave0":   {"ns/high", "ns/plain"},
		"wave1":   {"ns/critical", "ns/cluster-critical"},
		"waiting": {"ns/leaving"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plan waves mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Skipped{{Pod: "ns/agent", Reason: reasonDaemonSet}}, p.skipped); diff != "" {
		t.Errorf("plan skipped mismatch (-want +got):\n%s", diff)
	}
}

func TestClampGrace(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	margin := 5 * time.Second
	tests := []struct {
		name     string
		own      int64
		deadline time.Time
		want     *int64
	}{
		{"no deadline keeps own", 600, time.Time{}, nil},
		{"plenty of time keeps own", 30, now.Add(2 * time.Minute), nil},
		{"clamped to time left less margin", 300, now.Add(2 * time.Minute), ptr.To[int64](115)},
		{"partial seconds round down", 300, now.Add(20*time.Second + 900*time.Millisecond), ptr.To[int64](15)},
		{"equal keeps own", 115, now.Add(2 * time.Minute), nil},
		{"inside the margin floors at one second", 30, now.Add(3 * time.Second), ptr.To[int64](1)},
		{"past the deadline floors at one second", 30, now.Add(-time.Minute), ptr.To[int64](1)},
		{"own zero stays zero", 0, now.Add(time.Second), nil},
		{"own one not raised", 1, now.Add(-time.Minute), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := clampGrace(tt.own, tt.deadline, now, margin)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("clampGrace(%d) mismatch (-want +got):\n%s", tt.own, diff)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	initial, most := 100*time.Millisecond, 3*time.Second
	tests := []struct {
		attempt int
		lo, hi  time.Duration // inclusive bounds over the jitter's range
	}{
		{0, 50 * time.Millisecond, 100 * time.Millisecond},
		{1, 100 * time.Millisecond, 200 * time.Millisecond},
		{4, 800 * time.Millisecond, 1600 * time.Millisecond},
		{5, 1500 * time.Millisecond, 3 * time.Second},
		{50, 1500 * time.Millisecond, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.attempt), func(t *testing.T) {
			lo := backoff(tt.attempt, initial, most, func() float64 { return 0 })
			hi := backoff(tt.attempt, initial, most, func() float64 { return 1 })
			if lo != tt.lo || hi != tt.hi {
				t.Errorf("backoff(%d) range = [%v, %v], want [%v, %v]", tt.attempt, lo, hi, tt.lo, tt.hi)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	budget := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	budget.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: policyv1.DisruptionBudgetCause}}
	nsGoing := apierrors.NewForbidden(pods, "p", errors.New("namespace terminating"))
	nsGoing.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}
	tests := []struct {
		name string
		err  error
		want outcome
	}{
		{"accepted", nil, outEvicted},
		{"not found", apierrors.NewNotFound(pods, "p"), outGone},
		{"uid precondition", apierrors.NewConflict(pods, "p", errors.New("uid mismatch")), outGone},
		{"pdb cause", budget, outBlocked},
		{"pdb message", apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10), outBlocked},
		{"several pdbs", apierrors.NewInternalError(errors.New("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.")), outBlocked},
		{"pdb bookkeeping behind", apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}, "b", errors.New("too big")), outBlocked},
		{"api throttling", apierrors.NewTooManyRequests("too many requests, please try again later", 1), outRetry},
		{"server timeout", apierrors.NewServerTimeout(pods, "create", 1), outRetry},
		{"unavailable", apierrors.NewServiceUnavailable("etcd"), outRetry},
		{"connection", errors.New("dial tcp: connection refused"), outRetry},
		{"namespace terminating", nsGoing, outNSGoing},
		{"rbac", apierrors.NewForbidden(pods, "p", errors.New("cannot create pods/eviction")), outFailed},
		{"bad request", apierrors.NewBadRequest("nope"), outFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify(tt.err); got != tt.want {
				t.Errorf("classify(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

func TestTuneRESTConfig(t *testing.T) {
	tests := []struct {
		name             string
		qps              float32
		burst            int
		wantQPS          float32
		wantBurst        int
		wantLimiterClear bool
	}{
		{"defaults", 0, 0, DefaultQPS, DefaultBurst, true},
		{"given", 50, 80, 50, 80, true},
		{"unlimited", -1, 0, -1, DefaultBurst, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &rest.Config{QPS: 5, Burst: 10}
			TuneRESTConfig(cfg, tt.qps, tt.burst)
			if cfg.QPS != tt.wantQPS || cfg.Burst != tt.wantBurst || cfg.RateLimiter != nil {
				t.Errorf("TuneRESTConfig(%v, %d) = qps %v burst %d, want %v %d", tt.qps, tt.burst, cfg.QPS, cfg.Burst, tt.wantQPS, tt.wantBurst)
			}
		})
	}
}
