package drain

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A give-back removes Drainpipe's annotations and leaves another's key
// under drainpipe.dev/: the admission policy refuses Drainpipe a change
// to it, and it is not Drainpipe's to remove.
func TestUncordonPatchLeavesOthersAnnotations(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{
		AnnotationKind: "spot-interruption", AnnotationEventID: "e", AnnotationReport: "{}",
		"drainpipe.dev/owner": "platform", AnnotationActed: "[]",
	}}}
	p, _ := uncordonPatch(node, ReadMarks(node))
	for _, k := range []string{AnnotationKind, AnnotationEventID, AnnotationReport} {
		if v, ok := p.Metadata.Annotations[k]; !ok || v != nil {
			t.Errorf("give-back does not remove %s", k)
		}
	}
	for _, k := range []string{"drainpipe.dev/owner", AnnotationActed} {
		if _, ok := p.Metadata.Annotations[k]; ok {
			t.Errorf("give-back touches %s", k)
		}
	}
	only := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{"drainpipe.dev/owner": "platform"}}}
	if why := leave(only, ReadMarks(only), Match{}); why == "" || hasDrainpipeAnnotation(only) {
		t.Errorf("a node with only another's drainpipe.dev/ key is given back (%q)", why)
	}
}
