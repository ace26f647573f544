package drain

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// MarkOutOfService puts Kubernetes' non-graceful shutdown taint
// (node.kubernetes.io/out-of-service=nodeshutdown:NoExecute) on a node
// whose instance EC2 reports stopped or terminated, so the pod GC
// controller deletes its pods and their volumes detach, and records that
// Drainpipe put it (Uncordon removes only its own): the mark is the
// taint's own time, so it names that taint and no later one. It reports
// whether it wrote; a node that already carries the taint is left as it
// is. The admission policy admits the taint only on a node that is not
// Ready (its kubelet gone, as non-graceful shutdown requires).
func MarkOutOfService(ctx context.Context, client kubernetes.Interface, name string, now time.Time) (bool, error) {
	for attempt := 1; ; attempt++ {
		node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("getting node %s: %w", name, err)
		}
		for _, t := range node.Spec.Taints {
			if t.Key == OutOfServiceTaintKey {
				return false, nil
			}
		}
		added := metav1.NewTime(now.Truncate(time.Second))
		taints := append(append([]corev1.Taint{}, node.Spec.Taints...), corev1.Taint{
			Key: OutOfServiceTaintKey, Value: outOfServiceTaintValue, Effect: corev1.TaintEffectNoExecute, TimeAdded: &added})
		p := nodePatch{
			Metadata: patchMeta{ResourceVersion: node.ResourceVersion,
				Annotations: map[string]string{AnnotationOutOfService: oosMark(added)}},
			Spec: &patchSpec{Unschedulable: node.Spec.Unschedulable, Taints: taints},
		}
		// Held, so the sweep finds it if the notice that ends it is lost.
		p.Metadata.Labels, _ = heldLabel(nil, node.Labels, nil)
		body, err := json.Marshal(p)
		if err != nil {
			return false, fmt.Errorf("encoding node patch: %w", err)
		}
		_, err = client.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, body, patchOptions())
		if err == nil {
			return true, nil
		}
		if !apierrors.IsConflict(err) || attempt == cordonAttempts {
			return false, fmt.Errorf("patching node %s: %w", name, err)
		}
	}
}

// oosMark is AnnotationOutOfService's value for a taint added at t: its
// timeAdded, as the API server keeps it (RFC 3339, whole seconds).
func oosMark(t metav1.Time) string { return t.UTC().Format(time.RFC3339) }

// ownOutOfService reports whether t is the out-of-service taint Drainpipe
// put, by its mark: the taint's time, or "true" from a release before
// the mark named its taint.
func ownOutOfService(t corev1.Taint, mark string) bool {
	return t.Key == OutOfServiceTaintKey && mark != "" &&
		(mark == "true" || (t.TimeAdded != nil && mark == oosMark(*t.TimeAdded)))
}
