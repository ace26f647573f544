package drain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, Controller: ptr.To(true)}}
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
		// Not an apps/v1 DaemonSet: no node agent by rule, evicted like any pod.
		{"other group's daemonset", pod("a", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps.kruise.io/v1alpha1", Kind: "DaemonSet", Name: "live", Controller: ptr.To(true)}}
		}), true, verdict{act: actEvict}},
		{"tolerates the cordon", pod("a", ownedBy("ReplicaSet", "rs"), func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		}), true, verdict{act: actSkip, reason: reasonTolerates}},
		{"tolerates both taints by key", pod("a", ownedBy("ReplicaSet", "rs"), func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{
				{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
				{Key: TaintKey, Operator: corev1.TolerationOpEqual, Value: "spot-interruption"},
			}
		}), true, verdict{act: actSkip, reason: reasonTolerates}},
		{"bare pod tolerating the cordon is not recreated", pod("a", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		}), true, verdict{act: actEvict, reason: "no controller: nothing will recreate it", warn: true}},
		{"tolerates only unschedulable", pod("a", ownedBy("ReplicaSet", "rs"), func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists}}
		}), true, verdict{act: actEvict}},
		{"tolerates another taint value", pod("a", ownedBy("ReplicaSet", "rs"), func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{
				{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists},
				{Key: TaintKey, Operator: corev1.TolerationOpEqual, Value: "rebalance-recommendation"},
			}
		}), true, verdict{act: actEvict}},
		{"emptyDir", pod("a", ownedBy("ReplicaSet", "rs"), func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}), true, verdict{act: actEvict, reason: "emptyDir data is lost with the instance"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			taint := corev1.Taint{Key: TaintKey, Value: "spot-interruption", Effect: corev1.TaintEffectNoSchedule}
			got := judge(context.Background(), &tt.pod, judgeOpts{evictUnmanaged: tt.unmanaged, dsExists: dsExists, taint: taint})
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(verdict{})); diff != "" {
				t.Errorf("judge() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanWaves(t *testing.T) {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ds"}}
	pods := []corev1.Pod{
		pod("critical", ownedBy("ReplicaSet", "rs"), func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](2000001000) }),
		pod("cluster-critical", ownedBy("ReplicaSet", "rs"), func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](2000000000) }),
		pod("high", ownedBy("ReplicaSet", "rs"), func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](1999999999) }),
		pod("plain", ownedBy("ReplicaSet", "rs")),
		pod("agent", ownedBy("DaemonSet", "ds")),
		pod("leaving", ownedBy("ReplicaSet", "rs"), func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} }),
	}
	objs := []runtime.Object{ds}
	for i := range pods {
		objs = append(objs, &pods[i])
	}
	d := New(fake.NewClientset(objs...), DefaultConfig(), nil)
	r, err := d.newRun(context.Background(), Request{Node: "n1", Kind: "spot-interruption", Evict: true}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("newRun: %v", err)
	}
	keys := func(ts []*target, waiting bool) []string {
		out := []string{}
		for _, t := range ts {
			if (t.state == stateWaiting) == waiting {
				out = append(out, t.key)
			}
		}
		slices.Sort(out)
		return out
	}
	got := map[string][]string{
		"wave0":   keys(r.queued[0], false),
		"wave1":   keys(r.queued[1], false),
		"waiting": keys(r.queued[0], true),
	}
	want := map[string][]string{
		"wave0":   {"ns/high", "ns/plain"},
		"wave1":   {"ns/cluster-critical", "ns/critical"},
		"waiting": {"ns/leaving"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plan waves mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Skipped{{Pod: "ns/agent", Reason: reasonDaemonSet}}, r.skipped); diff != "" {
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
	budget := budgetRefused()
	processing := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10)
	processing.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: policyv1.DisruptionBudgetCause, Message: "The disruption budget b is still being processed by the server."}}
	nsGoing := apierrors.NewForbidden(pods, "p", errors.New("namespace terminating"))
	nsGoing.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}
	tests := []struct {
		name string
		err  error
		want outcome
	}{
		{"accepted", nil, outEvicted},
		{"not found", apierrors.NewNotFound(pods, "p"), outGone},
		{"uid precondition", apierrors.NewConflict(pods, "p", errors.New("uid mismatch")), outConflict},
		{"pdb cause", budget, outBlocked},
		{"pdb being processed", processing, outBlocked},
		// The eviction handler's exact answer: a Status, code 500, no reason.
		{"several pdbs", &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 500,
			Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}}, outFailed},
		{"server fault", apierrors.NewInternalError(errors.New("etcd leader changed")), outRetry},
		{"pdb bookkeeping behind", apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}, "b", errors.New("pdb disruptions allowed is negative")), outBlocked},
		{"api throttling", apierrors.NewTooManyRequests("too many requests, please try again later", 1), outRetry},
		{"throttling naming a budget", apierrors.NewTooManyRequests("disruption budget of pod poddisruptionbudget-0", 1), outRetry},
		{"server timeout", apierrors.NewServerTimeout(pods, "create", 1), outRetry},
		{"pdb update conflicts", apierrors.NewTimeoutError(`couldn't update PodDisruptionBudget "b" due to conflicts`, 10), outRetry},
		{"unavailable", apierrors.NewServiceUnavailable("etcd"), outRetry},
		{"connection", errors.New("dial tcp: connection refused"), outRetry},
		{"namespace terminating", nsGoing, outNSGoing},
		{"rbac", apierrors.NewForbidden(pods, "p", errors.New("cannot create pods/eviction")), outFailed},
		// A pod's name is no reason to think a budget refused it.
		{"rbac on a pod named like a budget", apierrors.NewForbidden(pods, "poddisruptionbudget-sync-0", errors.New(`User "drainpipe" cannot create resource "pods/eviction"`)), outFailed},
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

func TestGrantedTo(t *testing.T) {
	now := time.Date(2026, 11, 23, 5, 0, 0, 0, time.UTC)
	long := now.Add(-time.Hour) // created long before
	tests := []struct {
		name        string
		at, created time.Time
		want        bool
	}{
		{"no record", time.Time{}, long, false},
		{"just granted", now, long, true},
		{"granted in the server's second", now.Add(time.Second), long, true},
		{"young", now.Add(-grantMaxAge + time.Second), long, true},
		{"too old to be sure the controller still counts it", now.Add(-grantMaxAge), long, false},
		{"granted to an earlier pod of the same name", now.Add(-time.Second), now, false},
		{"granted as the pod was created", now, now, true},
	}
	for _, tt := range tests {
		if got := grantedTo(tt.at, tt.created, now); got != tt.want {
			t.Errorf("%s: grantedTo(%v, %v) = %v, want %v", tt.name, tt.at, tt.created, got, tt.want)
		}
	}
}

func TestNoticeEnd(t *testing.T) {
	now := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		period   time.Duration
		deadline time.Time
		grace    int64
		want     time.Time
	}{
		{"off", 0, time.Time{}, 30, time.Time{}},
		{"negative: at once", -time.Minute, time.Time{}, 30, time.Time{}},
		{"no deadline: the whole period", time.Minute, time.Time{}, 30, now.Add(time.Minute)},
		{"far deadline: the whole period", time.Minute, now.Add(time.Hour), 30, now.Add(time.Minute)},
		// Spot: 120 s left, 30 s grace, 5 s margin: evicted by 85 s.
		{"bounded by the deadline less grace and margin", 5 * time.Minute, now.Add(2 * time.Minute), 30, now.Add(85 * time.Second)},
		{"no room left: at once", time.Minute, now.Add(20 * time.Second), 30, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := noticeEnd(now, tt.period, tt.deadline, tt.grace, 5*time.Second); !got.Equal(tt.want) {
				t.Errorf("noticeEnd = %v, want %v", got, tt.want)
			}
		})
	}
}
