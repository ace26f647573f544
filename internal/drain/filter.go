package drain

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	reasonTolerates   = "tolerates the cordon: it would be scheduled straight back"
)

// verdict is the filters' decision on one pod.
type verdict struct {
	act    action
	reason string // why skipped, or a note for an evicted pod
	warn   bool   // log the note as a warning
}

// daemonSetExists reports whether the DaemonSet ns/name exists.
type daemonSetExists func(ctx context.Context, ns, name string) (bool, error)

// judgeOpts is what judge needs besides the pod.
type judgeOpts struct {
	evictUnmanaged bool
	dsExists       daemonSetExists
	taint          corev1.Taint // the taint the cordon puts on the node
}

// judge decides what to do with pod. DaemonSet pods are skipped only while
// their DaemonSet exists: an orphan is treated as a pod without controller.
func judge(ctx context.Context, pod *corev1.Pod, o judgeOpts) verdict {
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
	if isDaemonSet(ctrl) {
		ok, err := o.dsExists(ctx, pod.Namespace, ctrl.Name)
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
	if ctrl != nil && tolerates(pod.Spec.Tolerations, unschedulableTaint) && tolerates(pod.Spec.Tolerations, o.taint) {
		// Its controller's replacement could be scheduled straight back
		// on the cordoned node.
		return verdict{act: actSkip, reason: reasonTolerates}
	}
	v := verdict{act: actEvict}
	if ctrl == nil {
		if !o.evictUnmanaged {
			return verdict{act: actSkip, reason: reasonUnmanaged}
		}
		v.reason, v.warn = "no controller: nothing will recreate it", true
	}
	if hasEmptyDir(pod) {
		v.reason = join(v.reason, "emptyDir data is lost with the instance")
	}
	return v
}

// isDaemonSet tells an apps/v1 DaemonSet owner from other kinds of that
// name (OpenKruise's, for one), whose pods are not node agents by rule.
func isDaemonSet(ref *metav1.OwnerReference) bool {
	if ref == nil || ref.Kind != "DaemonSet" {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == appsv1.GroupName
}

// unschedulableTaint is how the scheduler sees a cordoned node.
var unschedulableTaint = corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}

// tolerates reports whether any of ts tolerates taint, as the scheduler
// matches them.
func tolerates(ts []corev1.Toleration, taint corev1.Taint) bool {
	for _, t := range ts {
		if t.Effect != "" && t.Effect != taint.Effect {
			continue
		}
		if t.Key != "" && t.Key != taint.Key {
			continue
		}
		switch t.Operator {
		case corev1.TolerationOpExists:
			return true
		case corev1.TolerationOpEqual, "":
			if t.Key != "" && t.Value == taint.Value {
				return true
			}
		}
	}
	return false
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
