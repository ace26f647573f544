package drain

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestRecordActed(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if err := RecordActed(ctx, client, "n1", ScheduledKey("instance-retirement", start)); err != nil {
		t.Fatal(err)
	}
	node, _ := client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	for _, c := range []struct {
		code  string
		start time.Time
		want  bool
	}{
		{"instance-retirement", start, true},
		{"instance-retirement", start.Add(30 * time.Minute), true}, // the other source's precision
		{"instance-retirement", start.Add(-sameEventSlack), true},
		{"instance-retirement", start.Add(sameEventSlack + time.Second), false},
		{"instance-retirement", start.Add(48 * time.Hour), false},
		{"system-reboot", start, false},
	} {
		if got := Acted(node, c.code, c.start); got != c.want {
			t.Errorf("Acted(%s, %s) = %v, want %v", c.code, c.start, got, c.want)
		}
	}
	for i := range maxActed + 2 {
		if err := RecordActed(ctx, client, "n1", ScheduledKey("system-reboot", start.Add(time.Duration(i)*24*time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	node, _ = client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if n := len(actedKeys(node)); n != maxActed {
		t.Errorf("record holds %d keys, want the newest %d", n, maxActed)
	}
	if Acted(node, "instance-retirement", start) {
		t.Error("oldest key kept past the bound")
	}
	// A give-back leaves the record: a late notice must still find it.
	node.Annotations[AnnotationKind] = "scheduled-change"
	p, _ := uncordonPatch(node, ReadMarks(node))
	if _, removed := p.Metadata.Annotations[AnnotationActed]; removed {
		t.Error("give-back removes the acted record")
	}
}
