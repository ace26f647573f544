package drain

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A cordon records the newest threat's event time and never moves it back;
// a restore dated no later than it is overtaken, one dated after it is not.
func TestThreatTimeOrdersRestores(t *testing.T) {
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{}}}
	p, _ := cordonPatch(node, Request{Node: "n", Kind: "spot-interruption", EventTime: at}, DefaultConfig(), at)
	if got := p.Metadata.Annotations[AnnotationThreatTime]; got != "2026-11-20T10:00:00Z" {
		t.Fatalf("threat time written %q, want the event's", got)
	}
	node.Annotations[AnnotationThreatTime] = "2026-11-20T10:00:00Z"
	node.Annotations[AnnotationKind] = "spot-interruption"
	if p, _ := cordonPatch(node, Request{Node: "n", Kind: "state-change", EventTime: at.Add(-time.Minute)}, DefaultConfig(), at); p.Metadata.Annotations[AnnotationThreatTime] != "" {
		t.Errorf("an older threat moved the threat time back to %q", p.Metadata.Annotations[AnnotationThreatTime])
	}
	m := ReadMarks(node)
	for _, tc := range []struct {
		restore time.Time
		want    bool
	}{{at.Add(-time.Minute), true}, {at, true}, {at.Add(time.Second), false}, {time.Time{}, false}} {
		why := leave(node, m, Match{Kinds: []string{"spot-interruption"}, RestoreTime: tc.restore})
		if got := strings.Contains(why, "overtaken"); got != tc.want {
			t.Errorf("restore at %s: leave = %q, want overtaken %v", tc.restore, why, tc.want)
		}
	}
}

// leave says why a give-back matching match leaves node held; empty when
// it gives the node back whole.
func leave(node *corev1.Node, m Marks, match Match) string {
	g := Given{Marks: m}
	p, _, why := plan(node, &g, match)
	if p != nil && len(g.Kept) == 0 {
		return ""
	}
	return why
}

// Marks an earlier release wrote read as a set of one; a set an earlier
// release left behind when it gave the node back (its single-hold marks
// gone) is no hold.
func TestEarlierReleasesMarks(t *testing.T) {
	legacy := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{
		AnnotationKind: "spot-interruption", AnnotationEventID: "e1", AnnotationFirstSeen: "2026-11-20T10:00:00Z",
		AnnotationDeadline: "2026-11-20T10:02:00Z"}}}
	if got := ReadMarks(legacy).Holds; len(got) != 1 || got[0].Key().String() != "spot-interruption/e1" || got[0].Deadline == "" {
		t.Errorf("an earlier release's hold reads as %v, want a set of one", got)
	}
	stale := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{
		AnnotationHolds: `[{"kind":"asg-lifecycle","id":"tok","since":"2026-11-20T10:00:00Z"}]`}}}
	if got := ReadMarks(stale).Holds; len(got) != 0 {
		t.Errorf("a set left on a node given back reads as %v, want none", got)
	}
}
