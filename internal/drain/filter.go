package drain

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Our own filters rather than k8s.io/kubectl/pkg/drain's: that package adds
// about 3 MB to the Lambda binary, and its policy differs from ours (it
// refuses emptyDir and unmanaged pods unless forced, and evicts finished
// ones); these few rules are simpler to own than to configure around.

// action is what a Run does with one pod.
type action int

const (
	actSkip  action = iota // leave it alone
	actEvict               // evict it
	actWait                // already terminating: wait for it to go
)

// Why pods are skipped or noted, as they appear in reports.
const (
	reasonMirror      = "mirror pod"
	reasonFinished    = "finished"
	reasonDaemonSet   = "daemonset"
	reasonUnmanaged   = "no controller"
	reasonTerminating = "already terminating"
)

// verdict is the filters' decision on one pod.
type verdict struct {
	act    action
	reason string // why skipped, or a note for an evicted pod
	warn   bool   // log the note as a warning
}

// daemonSetExists reports whether the DaemonSet ns/name exists.
type daemonSetExists func(ctx context.Context, ns, name string) (bool, error)

// judge decides what to do with pod. DaemonSet pods are skipped only while
// their DaemonSet exists: an orphan is treated as a pod without controller.
func judge(ctx context.Context, pod *corev1.Pod, evictUnmanaged bool, dsExists daemonSetExists) verdict {
	if _, ok := pod.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return verdict{act: actSkip, reason: reasonMirror}
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return verdict{act: actSkip, reason: reasonFinished}
	}
	if pod.DeletionTimestamp != nil {
		return verdict{act: actWait, reason: reasonTerminating}
	}
	ctrl := metav1.GetControllerOf(pod)
	if ctrl != nil && ctrl.Kind == "DaemonSet" {
		ok, err := dsExists(ctx, pod.Namespace, ctrl.Name)
		if err != nil {
			// Evicting a DaemonSet pod could take the node's networking
			// with it: when unsure, leave it.
			return verdict{act: actSkip, reason: fmt.Sprintf("daemonset lookup failed: %v", err)}
		}
		if ok {
			return verdict{act: actSkip, reason: reasonDaemonSet}
		}
		ctrl = nil
	}
	v := verdict{act: actEvict}
	if ctrl == nil {
		if !evictUnmanaged {
			return verdict{act: actSkip, reason: reasonUnmanaged}
		}
		v.reason, v.warn = "no controller: nothing will recreate it", true
	}
	if hasEmptyDir(pod) {
		v.reason = join(v.reason, "emptyDir data is lost with the instance")
	}
	return v
}

func hasEmptyDir(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir != nil {
			return true
		}
	}
	return false
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// target is a pod a Run evicts or waits for.
type target struct {
	key      string // namespace/name
	ns, name string
	uid      types.UID
	grace    int64 // the pod's own terminationGracePeriodSeconds
	critical bool

	// Guarded by run.mu.
	state  state
	detail string        // last refusal or error
	gone   chan struct{} // closed when the pod leaves the node
	isGone bool
}

func newTarget(pod *corev1.Pod) *target {
	grace := int64(defaultPodGraceSecond)
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = *g
	}
	return &target{
		key:      podKey(pod.Namespace, pod.Name),
		ns:       pod.Namespace,
		name:     pod.Name,
		uid:      pod.UID,
		grace:    grace,
		critical: pod.Spec.Priority != nil && *pod.Spec.Priority >= criticalPriority,
		gone:     make(chan struct{}),
	}
}

func podKey(ns, name string) string { return ns + "/" + name }

// plan sorts a node's pods into eviction waves, pods to wait for and
// pods to skip. Waves follow graceful node shutdown: ordinary pods first,
// critical ones last.
type plan struct {
	waves   [2][]*target
	waiting []*target
	skipped []Skipped
}

func (d *Drainer) plan(ctx context.Context, pods []corev1.Pod, log *slog.Logger) plan {
	var p plan
	dsExists := d.daemonSetCache()
	for i := range pods {
		pod := &pods[i]
		key := podKey(pod.Namespace, pod.Name)
		v := judge(ctx, pod, d.cfg.EvictUnmanaged, dsExists)
		switch v.act {
		case actSkip:
			p.skipped = append(p.skipped, Skipped{Pod: key, Reason: v.reason})
			log.Debug("pod skipped", slog.String("pod", key), slog.String("reason", v.reason))
		case actWait:
			p.waiting = append(p.waiting, newTarget(pod))
		case actEvict:
			t := newTarget(pod)
			wave := 0
			if t.critical {
				wave = 1
			}
			p.waves[wave] = append(p.waves[wave], t)
			switch {
			case v.warn:
				log.Warn("evicting pod", slog.String("pod", key), slog.String("note", v.reason))
			case v.reason != "":
				log.Info("evicting pod", slog.String("pod", key), slog.String("note", v.reason))
			}
		}
	}
	return p
}

// daemonSetCache looks DaemonSets up once per Run.
func (d *Drainer) daemonSetCache() daemonSetExists {
	seen := map[string]bool{}
	return func(ctx context.Context, ns, name string) (bool, error) {
		key := podKey(ns, name)
		if ok, hit := seen[key]; hit {
			return ok, nil
		}
		_, err := d.client.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			seen[key] = true
		case apierrors.IsNotFound(err):
			seen[key] = false
		default:
			return false, fmt.Errorf("getting daemonset %s: %w", key, err)
		}
		return seen[key], nil
	}
}
