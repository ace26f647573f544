package drain

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func TestCordonPatch(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	deadline := now.Add(2 * time.Minute)
	req := Request{Node: "n1", Kind: "spot-interruption", EventID: "ev-1", Deadline: deadline}
	const heldFor = `[{"kind":"spot-interruption","id":"ev-1","time":"2026-11-22T11:00:00Z","deadline":"2026-11-22T12:02:00Z","since":"2026-11-22T11:00:00Z"}]`
	cordoned := corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: "n1", ResourceVersion: "7",
			Labels: map[string]string{ExcludeFromLBLabel: "true", LabelHeld: "true"},
			Annotations: map[string]string{
				AnnotationEventID:      "ev-1",
				AnnotationKind:         "spot-interruption",
				AnnotationDeadline:     "2026-11-22T12:02:00Z",
				AnnotationFirstSeen:    "2026-11-22T11:00:00Z",
				AnnotationInterruption: `{"kind":"spot-interruption","deadline":"2026-11-22T12:02:00Z","eventId":"ev-1"}`,
				AnnotationHolds:        heldFor,
			},
		},
		Spec: corev1.NodeSpec{
			Unschedulable: true,
			Taints: []corev1.Taint{
				{Key: "other", Effect: corev1.TaintEffectNoSchedule},
				{Key: TaintKey, Value: "spot-interruption", Effect: corev1.TaintEffectNoSchedule},
			},
		},
	}
	other := corev1.Taint{Key: "other", Effect: corev1.TaintEffectNoSchedule}
	tests := []struct {
		name        string
		node        func(n *corev1.Node)
		cfg         func(c *Config)
		req         func(r *Request)
		wantChanged []string
		wantPatch   nodePatch
	}{
		{name: "already cordoned: nothing", wantPatch: nodePatch{Metadata: patchMeta{ResourceVersion: "7"}}},
		{
			name: "fresh node: everything",
			node: func(n *corev1.Node) {
				n.Labels, n.Annotations, n.Spec = nil, nil, corev1.NodeSpec{Taints: []corev1.Taint{other}}
			},
			wantChanged: []string{"unschedulable", "taint", "label", "held label", "annotations"},
			wantPatch: nodePatch{
				Metadata: patchMeta{
					ResourceVersion: "7",
					Labels:          map[string]string{ExcludeFromLBLabel: "true", LabelHeld: "true"},
					Annotations: map[string]string{
						AnnotationHolds:   `[{"kind":"spot-interruption","id":"ev-1","deadline":"2026-11-22T12:02:00Z","since":"2026-11-22T12:00:00Z"}]`,
						AnnotationEventID: "ev-1", AnnotationKind: "spot-interruption",
						AnnotationDeadline: "2026-11-22T12:02:00Z", AnnotationFirstSeen: "2026-11-22T12:00:00Z",
						AnnotationRestore:      `{"unschedulable":true,"label":true}`,
						AnnotationInterruption: `{"kind":"spot-interruption","deadline":"2026-11-22T12:02:00Z","eventId":"ev-1"}`,
					},
				},
				Spec: &patchSpec{Unschedulable: true, Taints: []corev1.Taint{
					other, {Key: TaintKey, Value: "spot-interruption", Effect: corev1.TaintEffectNoSchedule},
				}},
			},
		},
		{
			name:        "new event keeps first-seen",
			req:         func(r *Request) { r.EventID, r.Kind, r.Deadline = "ev-2", "rebalance-recommendation", time.Time{} },
			wantChanged: []string{"taint", "annotations"},
			wantPatch: nodePatch{
				Metadata: patchMeta{ResourceVersion: "7", Annotations: map[string]string{
					AnnotationHolds:   `[{"kind":"spot-interruption","id":"ev-1","time":"2026-11-22T11:00:00Z","deadline":"2026-11-22T12:02:00Z","since":"2026-11-22T11:00:00Z"},{"kind":"rebalance-recommendation","id":"ev-2","since":"2026-11-22T12:00:00Z"}]`,
					AnnotationEventID: "ev-2", AnnotationKind: "rebalance-recommendation",
					AnnotationInterruption: `{"kind":"rebalance-recommendation","eventId":"ev-2"}`,
				}},
				Spec: &patchSpec{Unschedulable: true, Taints: []corev1.Taint{
					other, {Key: TaintKey, Value: "rebalance-recommendation", Effect: corev1.TaintEffectNoSchedule},
				}},
			},
		},
		{
			// A stopped instance's drain is redelivered with a later
			// deadline each time: the first one written stands.
			name:      "same event, later deadline: written once",
			req:       func(r *Request) { r.Deadline = deadline.Add(30 * time.Second) },
			wantPatch: nodePatch{Metadata: patchMeta{ResourceVersion: "7"}},
		},
		{
			name:        "same event, earlier deadline: updated",
			req:         func(r *Request) { r.Deadline = deadline.Add(-30 * time.Second) },
			wantChanged: []string{"annotations"},
			wantPatch: nodePatch{Metadata: patchMeta{ResourceVersion: "7", Annotations: map[string]string{
				AnnotationHolds:        `[{"kind":"spot-interruption","id":"ev-1","time":"2026-11-22T11:00:00Z","deadline":"2026-11-22T12:01:30Z","since":"2026-11-22T11:00:00Z"}]`,
				AnnotationDeadline:     "2026-11-22T12:01:30Z",
				AnnotationInterruption: `{"kind":"spot-interruption","deadline":"2026-11-22T12:01:30Z","eventId":"ev-1"}`,
			}}},
		},
		{
			// A threat announced after its deadline is cordoned, not
			// drained; its deadline is still recorded for the sweep.
			name: "late threat: passed deadline recorded",
			req: func(r *Request) {
				r.EventID, r.Deadline, r.PassedDeadline = "ev-2", time.Time{}, now.Add(-3*time.Minute)
			},
			wantChanged: []string{"annotations"},
			wantPatch: nodePatch{Metadata: patchMeta{ResourceVersion: "7", Annotations: map[string]string{
				AnnotationHolds:   `[{"kind":"spot-interruption","id":"ev-1","time":"2026-11-22T11:00:00Z","deadline":"2026-11-22T12:02:00Z","since":"2026-11-22T11:00:00Z"},{"kind":"spot-interruption","id":"ev-2","deadline":"2026-11-22T11:57:00Z","since":"2026-11-22T12:00:00Z"}]`,
				AnnotationEventID: "ev-2", AnnotationDeadline: "2026-11-22T11:57:00Z",
				AnnotationInterruption: `{"kind":"spot-interruption","eventId":"ev-2"}`,
			}}},
		},
		{
			name:        "effect change replaces our taint only",
			cfg:         func(c *Config) { c.TaintEffect = string(corev1.TaintEffectPreferNoSchedule) },
			wantChanged: []string{"taint"},
			wantPatch: nodePatch{
				Metadata: patchMeta{ResourceVersion: "7"},
				Spec: &patchSpec{Unschedulable: true, Taints: []corev1.Taint{
					other, {Key: TaintKey, Value: "spot-interruption", Effect: corev1.TaintEffectPreferNoSchedule},
				}},
			},
		},
		{
			name:        "uncordoned by someone: only unschedulable",
			node:        func(n *corev1.Node) { n.Spec.Unschedulable = false },
			wantChanged: []string{"unschedulable"},
			wantPatch:   nodePatch{Metadata: patchMeta{ResourceVersion: "7"}, Spec: &patchSpec{Unschedulable: true}},
		},
		{
			name:      "load-balancer label off",
			node:      func(n *corev1.Node) { n.Labels = map[string]string{LabelHeld: "true"} },
			cfg:       func(c *Config) { c.ExcludeFromLB = false },
			wantPatch: nodePatch{Metadata: patchMeta{ResourceVersion: "7"}},
		},
		{
			// Held by a version before the label: the next cordon adds it.
			name:        "held without the label: labelled",
			node:        func(n *corev1.Node) { n.Labels = map[string]string{ExcludeFromLBLabel: "true"} },
			wantChanged: []string{"held label"},
			wantPatch: nodePatch{Metadata: patchMeta{ResourceVersion: "7",
				Labels: map[string]string{LabelHeld: "true"}}},
		},
		{
			name: "operator's cordon and label recorded as theirs",
			node: func(n *corev1.Node) {
				n.Labels, n.Annotations = map[string]string{ExcludeFromLBLabel: "false"}, nil
				n.Spec = corev1.NodeSpec{Unschedulable: true}
			},
			wantChanged: []string{"taint", "label", "held label", "annotations"},
			wantPatch: nodePatch{
				Metadata: patchMeta{
					ResourceVersion: "7",
					Labels:          map[string]string{ExcludeFromLBLabel: "true", LabelHeld: "true"},
					Annotations: map[string]string{
						AnnotationHolds:   `[{"kind":"spot-interruption","id":"ev-1","deadline":"2026-11-22T12:02:00Z","since":"2026-11-22T12:00:00Z"}]`,
						AnnotationEventID: "ev-1", AnnotationKind: "spot-interruption",
						AnnotationDeadline: "2026-11-22T12:02:00Z", AnnotationFirstSeen: "2026-11-22T12:00:00Z",
						AnnotationRestore:      `{"unschedulable":false,"label":true,"labelPrevious":"false"}`,
						AnnotationInterruption: `{"kind":"spot-interruption","deadline":"2026-11-22T12:02:00Z","eventId":"ev-1"}`,
					},
				},
				Spec: &patchSpec{Unschedulable: true, Taints: []corev1.Taint{
					{Key: TaintKey, Value: "spot-interruption", Effect: corev1.TaintEffectNoSchedule},
				}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := cordoned.DeepCopy()
			cfg, r := DefaultConfig(), req
			if tt.node != nil {
				tt.node(node)
			}
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			if tt.req != nil {
				tt.req(&r)
			}
			gotPatch, gotChanged := cordonPatch(node, r, cfg, now)
			if diff := cmp.Diff(tt.wantChanged, gotChanged); diff != "" {
				t.Errorf("changed mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantPatch, gotPatch); diff != "" {
				t.Errorf("patch mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWithTaintNoExecuteRecordsTime(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 500, time.UTC)
	got, ok := withTaint(nil, "spot-interruption", corev1.TaintEffectNoExecute, now)
	want := []corev1.Taint{{
		Key: TaintKey, Value: "spot-interruption", Effect: corev1.TaintEffectNoExecute,
		TimeAdded: &metav1.Time{Time: now.Truncate(time.Second)},
	}}
	if ok {
		t.Errorf("withTaint on an untainted node reported no change")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("withTaint mismatch (-want +got):\n%s", diff)
	}
}

func TestCordonBacksOffOnConflicts(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", ResourceVersion: "7"}}
	client := fake.NewClientset(node)
	conflicts := 2
	client.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		if conflicts == 0 {
			return false, nil, nil
		}
		conflicts--
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, "n1", errors.New("the object has been modified"))
	})
	d := New(client, DefaultConfig(), nil)
	var waits []time.Duration
	d.sleep = func(_ context.Context, w time.Duration) bool { waits = append(waits, w); return true }
	if _, err := d.Run(context.Background(), Request{Node: "n1", Kind: "spot-interruption"}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	// Equal jitter: the first wait within [initial/2, initial], the second
	// within [initial, 2*initial].
	if len(waits) != 2 || waits[0] < DefaultBackoffInitial/2 || waits[0] > DefaultBackoffInitial ||
		waits[1] < DefaultBackoffInitial || waits[1] > 2*DefaultBackoffInitial {
		t.Errorf("waits between conflicting patches = %v, want the first two backoffs", waits)
	}
}

// A node the caller has just read is patched as read: the cordon's own GET
// is one round trip more on the cold path of every interruption.
func TestCordonPatchesTheNodeAsRead(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", ResourceVersion: "7"}}
	client := fake.NewClientset(node)
	d := New(client, DefaultConfig(), nil)
	if _, err := d.Run(context.Background(), Request{Node: "n1", Kind: "spot-interruption", Read: node.DeepCopy()}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	var verbs []string
	for _, a := range client.Actions() {
		verbs = append(verbs, a.GetVerb())
	}
	if diff := cmp.Diff([]string{"patch"}, verbs); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	got, _ := client.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
	if !got.Spec.Unschedulable {
		t.Errorf("node not cordoned")
	}
}

// A node read before someone else changed it fails the patch's
// resourceVersion check: it is read again and patched at once, with no
// backoff (nobody is fighting over it; the copy was old).
func TestCordonRereadsAStaleNodeAtOnce(t *testing.T) {
	stale := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", ResourceVersion: "6"}}
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", ResourceVersion: "7"}})
	first := true
	client.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		if !first {
			return false, nil, nil
		}
		first = false
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, "n1", errors.New("the object has been modified"))
	})
	d := New(client, DefaultConfig(), nil)
	var waits []time.Duration
	d.sleep = func(_ context.Context, w time.Duration) bool { waits = append(waits, w); return true }
	if _, err := d.Run(context.Background(), Request{Node: "n1", Kind: "spot-interruption", Read: stale}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	var verbs []string
	for _, a := range client.Actions() {
		verbs = append(verbs, a.GetVerb())
	}
	if diff := cmp.Diff([]string{"patch", "get", "patch"}, verbs); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if len(waits) != 0 {
		t.Errorf("waited %v before re-reading a stale node, want no wait", waits)
	}
}
