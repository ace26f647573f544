package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// annotationInterruption is internal/drain.AnnotationInterruption.
const annotationInterruption = "drainpipe.dev/interruption"

// rv reads a resourceVersion as the etcd revision it is on this sandbox
// (one etcd for all kinds): their order is the order of the writes.
// A resourceVersion that is not a number reads as -1.
func rv(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// Through the real bootstrap: before the first eviction of a Spot drain,
// every pod carries the drainpipe.dev/interruption annotation and an
// InterruptionNotice event, and the node its annotation and start event.
func TestWorkloadsWarnedBeforeTheFirstEviction(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t, "DRAINPIPE_WARN_PODS=all")
	n := l.node(ctx, served)
	l.k8s.Deployment(ctx, "job", 4, fixture.PinnedTo(n.Name))
	l.k8s.WaitDeploymentReady(ctx, "job")
	pods := l.k8s.PodsOnNode(ctx, n.Name)

	w, err := l.k8s.Client.CoreV1().Pods(l.k8s.Namespace).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", n.Name).String()})
	if err != nil {
		t.Fatal(err)
	}
	firstEviction := make(chan int64, 1)
	annotatedAt := map[string]int64{}
	go func() {
		defer close(firstEviction)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			if p.DeletionTimestamp != nil {
				firstEviction <- rv(p.ResourceVersion)
				return
			}
			if _, ok := p.Annotations[annotationInterruption]; ok {
				if _, seen := annotatedAt[p.Name]; !seen {
					annotatedAt[p.Name] = rv(p.ResourceVersion)
				}
			}
		}
	}()
	l.invoke(ctx, t, time.Minute, message{id: "spot-warn", body: spotWarning(t, fixture.InstanceID(n))})
	w.Stop()
	evicted, ok := <-firstEviction
	if !ok {
		t.Fatal("no eviction seen")
	}
	if len(annotatedAt) != len(pods) {
		t.Errorf("%d of %d pods annotated before the first eviction (revision %d): %v", len(annotatedAt), len(pods), evicted, annotatedAt)
	}
	for _, p := range pods {
		e, ok := l.podEvent(ctx, t, p, "InterruptionNotice")
		switch {
		case !ok:
			t.Errorf("pod %s: no InterruptionNotice event", p.Name)
		case rv(e.ResourceVersion) > evicted:
			t.Errorf("pod %s: InterruptionNotice written at revision %s, after the first eviction at %d", p.Name, e.ResourceVersion, evicted)
		case !strings.Contains(e.Message, "the instance goes at"):
			t.Errorf("pod %s: notice %q lacks the deadline", p.Name, e.Message)
		}
	}
	if e, ok := l.nodeEvents(ctx, t, n.Name)["SpotInterruption"]; !ok || rv(e.ResourceVersion) > evicted {
		t.Errorf("node start event %v (found %v): want it written before the first eviction at %d", e.ResourceVersion, ok, evicted)
	}
	node := l.getNode(ctx, t, n.Name)
	if v := node.Annotations[annotationInterruption]; !strings.Contains(v, `"kind":"spot-interruption"`) || !strings.Contains(v, `"deadline":`) {
		t.Errorf("node annotation %s = %q, want the kind and the deadline", annotationInterruption, v)
	}
}

// podEvent finds Drainpipe's event of reason on pod.
func (l *live) podEvent(ctx context.Context, t *testing.T, p corev1.Pod, reason string) (corev1.Event, bool) {
	t.Helper()
	events := l.k8s.Client.CoreV1().Events(p.Namespace)
	kind := "Pod"
	uid := string(p.UID)
	sel := events.GetFieldSelector(&p.Name, &p.Namespace, &kind, &uid)
	list, err := events.List(ctx, metav1.ListOptions{FieldSelector: sel.String()})
	if err != nil {
		t.Fatalf("listing events: %v", err)
	}
	for _, e := range list.Items {
		if e.Reason == reason && e.Source.Component == "drainpipe" {
			return e, true
		}
	}
	return corev1.Event{}, false
}
