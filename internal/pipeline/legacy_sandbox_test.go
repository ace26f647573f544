package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/policy"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// A node held by a release that did not yet record the threat's event time
// carries only drainpipe.dev/first-seen (when it was cordoned, after the
// threat's event): a running notice dated before it is overtaken all the
// same, and one dated after it gives the node back.
func TestRestoreOrderedByFirstSeenWithoutThreatTime(t *testing.T) {
	s := newLiveScene(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cordoned := s.clock.Now().Add(-time.Minute).UTC().Truncate(time.Second)
	n, id := s.node(ctx, fixture.NodeOptions{Unschedulable: true, FieldManager: drain.FieldManager,
		Annotations: map[string]string{
			drain.AnnotationKind: string(event.KindSpotInterruption), drain.AnnotationEventID: "spot-old",
			drain.AnnotationDeadline:  cordoned.Add(time.Minute).Format(time.RFC3339),
			drain.AnnotationFirstSeen: cordoned.Format(time.RFC3339),
			drain.AnnotationRestore:   `{"unschedulable":true,"label":false}`},
		Taints: []corev1.Taint{{Key: drain.TaintKey, Value: string(event.KindSpotInterruption), Effect: corev1.TaintEffectNoSchedule}}})

	older := event.Interruption{Kind: event.KindStateChange, EventID: "sc-old", Time: cordoned.Add(-2 * time.Minute),
		State: "running", Restore: true}
	if r := act(t, ctx, s, id, policy.ActionNone, 1, older); r.Status != handler.StatusIgnored || !strings.Contains(r.Reason, "overtaken") {
		t.Errorf("running notice older than the hold: {%s %q}, want ignored as overtaken", statusName(r.Status), r.Reason)
	}
	if m := s.get(ctx, t, n.Name); !m.Cordoned || m.Kind != string(event.KindSpotInterruption) {
		t.Fatalf("after the older running notice: %+v, want still held for the Spot warning", m)
	}
	newer := older
	newer.EventID, newer.Time = "sc-new", cordoned.Add(time.Minute)
	if r := act(t, ctx, s, id, policy.ActionNone, 1, newer); r.Status != handler.StatusDone || !strings.Contains(r.Reason, "gave node") {
		t.Errorf("running notice after the hold: {%s %q}, want the node given back", statusName(r.Status), r.Reason)
	}
	if m := s.get(ctx, t, n.Name); m.Cordoned || m.Held() {
		t.Errorf("after the newer running notice: %+v, want given back", m)
	}
}
