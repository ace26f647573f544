package drain

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/drainpipe/drainpipe/internal/hold"
)

// These tests decide what a give-back writes from a node as read; that
// the API server applies it as meant (and refuses a stale one) is proved
// against the sandbox (uncordon_sandbox_test.go).

var giveT0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// holdOf is a hold of kind and id for a threat announced at.
func holdOf(kind, id string, at time.Time) hold.Hold {
	return hold.Hold{Kind: kind, ID: id, Time: hold.Precise(at), Since: hold.Stamp(giveT0)}
}

// heldFor is a node Drainpipe cordoned (it was schedulable) and tainted
// for holds.
func heldFor(holds ...hold.Hold) *corev1.Node {
	set := hold.Set(holds)
	newest, _ := set.Newest()
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: "3",
			Labels: map[string]string{LabelHeld: labelHeldOn, "team": "a"},
			Annotations: map[string]string{AnnotationRestore: `{"unschedulable":true}`, AnnotationHolds: set.Encode(),
				AnnotationKind: newest.Kind, AnnotationEventID: newest.ID, AnnotationThreatTime: newest.Time,
				AnnotationFirstSeen: newest.Since, "other.example/keep": "x"}},
		Spec: corev1.NodeSpec{Unschedulable: true, Taints: []corev1.Taint{
			{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
			{Key: TaintKey, Effect: corev1.TaintEffectNoSchedule}}},
	}
}

// withOutOfService adds the out-of-service taint, marked as Drainpipe's
// when own.
func withOutOfService(n *corev1.Node, own bool) *corev1.Node {
	added := metav1.NewTime(giveT0)
	n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: OutOfServiceTaintKey, Value: outOfServiceTaintValue,
		Effect: corev1.TaintEffectNoExecute, TimeAdded: &added})
	if own {
		n.Annotations[AnnotationOutOfService] = oosMark(added)
	}
	return n
}

func taintKeys(ts []corev1.Taint) []string {
	var keys []string
	for _, t := range ts {
		keys = append(keys, t.Key)
	}
	return keys
}

// A zero Match ends every hold; any field set narrows it.
func TestMatchAll(t *testing.T) {
	if !(Match{Running: true, DryRun: true}).all() {
		t.Error("a Match without a selector does not end every hold")
	}
	for _, m := range []Match{{Kinds: []string{"k"}}, {EventID: "e"}, {Holds: []hold.Key{{Kind: "k"}}}, {By: "d"},
		{RestoreTime: giveT0}} {
		if m.all() {
			t.Errorf("%+v ends every hold", m)
		}
	}
}

// A whole give-back makes the node schedulable, removes Drainpipe's taint
// and marks and keeps everyone else's.
func TestWholeGiveBackPatch(t *testing.T) {
	node := heldFor(holdOf("spot-interruption", "e1", giveT0))
	g := Given{Marks: ReadMarks(node)}
	p, changed, why := plan(node, &g, Match{Kinds: []string{"spot-interruption"}})
	if p == nil || why != "" || len(g.Ended) != 1 || len(g.Kept) != 0 {
		t.Fatalf("plan = %+v, %q; ended %v kept %v", p, why, g.Ended, g.Kept)
	}
	if !slices.Equal(changed, []string{"unschedulable", "taint", "held label", "annotations"}) {
		t.Errorf("changed %v", changed)
	}
	if p.Metadata.ResourceVersion != "3" || p.Spec == nil || p.Spec.Unschedulable == nil || *p.Spec.Unschedulable ||
		p.Spec.Taints == nil || !slices.Equal(taintKeys(*p.Spec.Taints), []string{"dedicated"}) {
		t.Errorf("patch %+v", p)
	}
	if v, ok := p.Metadata.Labels[LabelHeld]; !ok || v != nil || len(p.Metadata.Labels) != 1 {
		t.Errorf("labels %v, want the held label removed alone", p.Metadata.Labels)
	}
	for k := range node.Annotations {
		_, removed := p.Metadata.Annotations[k]
		if removed != slices.Contains(ownAnnotations, k) {
			t.Errorf("annotation %s removed %v", k, removed)
		}
	}
}

// A give-back leaves what Drainpipe did not do: an operator's cordon, an
// out-of-service taint it did not put, a label it did not set; it puts a
// label back as it was.
func TestWholeGiveBackLeavesOthersChanges(t *testing.T) {
	node := withOutOfService(heldFor(holdOf("spot-interruption", "e1", giveT0)), false)
	node.Annotations[AnnotationRestore] = `{"unschedulable":false,"label":true,"labelPrevious":"false"}`
	node.Labels[ExcludeFromLBLabel] = "true"
	p, changed := uncordonPatch(node, ReadMarks(node))
	if p.Spec.Unschedulable != nil || !slices.Equal(taintKeys(*p.Spec.Taints), []string{"dedicated", OutOfServiceTaintKey}) {
		t.Errorf("patch spec %+v", p.Spec)
	}
	if v := p.Metadata.Labels[ExcludeFromLBLabel]; v == nil || *v != "false" || !slices.Contains(changed, "label") {
		t.Errorf("exclusion label put back as %v (changed %v), want false", v, changed)
	}
	node.Labels[ExcludeFromLBLabel] = "false" // changed by someone since
	if p, _ := uncordonPatch(node, ReadMarks(node)); p.Metadata.Labels[ExcludeFromLBLabel] != nil {
		t.Error("an exclusion label changed since the cordon was rewritten")
	}
	node.Annotations[AnnotationRestore] = `{"unschedulable":false,"label":false}`
	node.Labels[ExcludeFromLBLabel] = "true"
	if p, _ := uncordonPatch(node, ReadMarks(node)); p.Metadata.Labels[ExcludeFromLBLabel] != nil {
		t.Error("an exclusion label Drainpipe did not set was changed")
	}
	own := withOutOfService(heldFor(holdOf("state-change", "e1", giveT0)), true)
	if p, _ := uncordonPatch(own, ReadMarks(own)); !slices.Equal(taintKeys(*p.Spec.Taints), []string{"dedicated"}) {
		t.Errorf("taints %v, want Drainpipe's out-of-service taint removed", taintKeys(*p.Spec.Taints))
	}
	bare := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{AnnotationKind: "k"}}}
	if p, changed := uncordonPatch(bare, ReadMarks(bare)); p.Spec != nil || p.Metadata.Labels != nil ||
		!slices.Equal(changed, []string{"annotations"}) {
		t.Errorf("node with only a kind mark: patch %+v, changed %v", p, changed)
	}
}

// A give-back that ends some holds rewrites the set and the newest hold's
// marks, leaving the cordon; one that ends none writes nothing unless the
// instance runs and Drainpipe's out-of-service taint must go.
func TestPartialGiveBackPatch(t *testing.T) {
	old := holdOf("scheduled-change", "ev-a", giveT0.Add(-time.Hour))
	old.Deadline, old.End = "2026-11-21T10:00:00Z", "2026-11-21T12:00:00Z"
	spot := holdOf("spot-interruption", "e-spot", giveT0)
	node := heldFor(old, spot)
	g := Given{Marks: ReadMarks(node)}
	p, changed, why := plan(node, &g, Match{Kinds: []string{"spot-interruption"}})
	if p == nil || why != "ended the hold of spot-interruption/e-spot; node stays held for scheduled-change/ev-a" {
		t.Fatalf("plan %+v, %q", p, why)
	}
	a := p.Metadata.Annotations
	if p.Spec != nil || !slices.Equal(changed, []string{"holds"}) || *a[AnnotationHolds] != hold.Set([]hold.Hold{old}).Encode() ||
		*a[AnnotationKind] != "scheduled-change" || *a[AnnotationEventID] != "ev-a" || *a[AnnotationThreatTime] != old.Time ||
		*a[AnnotationDeadline] != old.Deadline || *a[AnnotationThreatEnd] != old.End {
		t.Errorf("patch %+v, changed %v", p, changed)
	}
	if _, ok := a[AnnotationFirstSeen]; ok {
		t.Error("a partial give-back rewrote the first cordon's time")
	}
	// The newest left drops the marks it does not have.
	node = heldFor(spot, old)
	node.Annotations[AnnotationDeadline] = "2026-11-20T10:02:00Z"
	g = Given{Marks: ReadMarks(node)}
	p, _, _ = plan(node, &g, Match{Kinds: []string{"scheduled-change"}})
	if v, ok := p.Metadata.Annotations[AnnotationDeadline]; !ok || v != nil {
		t.Errorf("deadline %v, want removed", v)
	}
	if _, ok := p.Metadata.Annotations[AnnotationThreatEnd]; ok {
		t.Error("an absent threat end was removed")
	}
	if _, ok := p.Metadata.Annotations[AnnotationKind]; ok {
		t.Error("an unchanged kind was rewritten")
	}

	node = withOutOfService(heldFor(spot), true)
	g = Given{Marks: ReadMarks(node)}
	if p, _, why := plan(node, &g, Match{Kinds: []string{"scheduled-change"}}); p != nil ||
		why != "node is held for spot-interruption/e-spot, not for scheduled-change" {
		t.Errorf("no hold ended: %+v, %q", p, why)
	}
	p, changed, why = plan(node, &g, Match{Kinds: []string{"scheduled-change"}, Running: true})
	if p == nil || !strings.HasSuffix(why, "; its out-of-service taint removed (the instance runs)") ||
		!slices.Equal(changed, []string{"out-of-service taint"}) || !slices.Equal(taintKeys(*p.Spec.Taints), []string{"dedicated", TaintKey}) {
		t.Fatalf("running, none ended: %+v, %v, %q", p, changed, why)
	}
	if v, ok := p.Metadata.Annotations[AnnotationOutOfService]; !ok || v != nil {
		t.Error("the out-of-service mark stays")
	}
}

// A give-back that ends nothing says why.
func TestGiveBackSaysWhyItEndsNothing(t *testing.T) {
	spot := holdOf("spot-interruption", "", giveT0)
	spot.By = "d1"
	for _, c := range []struct {
		name  string
		node  *corev1.Node
		match Match
		want  string
	}{
		{"unmarked", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, Match{}, "node carries no Drainpipe marks"},
		{"karpenter", func() *corev1.Node {
			n := heldFor(spot)
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: KarpenterDisruptionTaintV0})
			return n
		}(), Match{}, "Karpenter is disrupting the node (karpenter.sh/disrupted taint): it is Karpenter's to give back"},
		{"overtaken", heldFor(spot), Match{RestoreTime: giveT0}, "overtaken: "},
		{"no threat", withOutOfService(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{}}}, true),
			Match{Kinds: []string{"state-change"}}, "node holds no threat"},
		{"event", heldFor(spot), Match{EventID: "e2"}, "node is held for event (none) (spot-interruption), not e2"},
		{"event with an id", heldFor(holdOf("spot-interruption", "e1", giveT0)), Match{EventID: "e2"},
			"node is held for event e1 (spot-interruption/e1), not e2"},
		{"kind", heldFor(spot), Match{Kinds: []string{"state-change", "scheduled-change"}},
			"node is held for spot-interruption, not for state-change or scheduled-change"},
		{"delivery", heldFor(spot), Match{By: "d2"}, "node is held for spot-interruption, none of them this give-back's"},
	} {
		g := Given{Marks: ReadMarks(c.node)}
		if p, _, why := plan(c.node, &g, c.match); p != nil || !strings.HasPrefix(why, c.want) {
			t.Errorf("%s: patch %+v, %q, want %q", c.name, p, why, c.want)
		}
	}
}

// A node's marks: Drainpipe's cordon only while spec.unschedulable is
// still its own, its out-of-service taint only with the mark naming it,
// Karpenter's taints of either version.
func TestReadMarks(t *testing.T) {
	node := withOutOfService(heldFor(holdOf("spot-interruption", "e1", giveT0)), true)
	if m := ReadMarks(node); !m.Cordoned || !m.Tainted || !m.OutOfSvc || m.Karpenter || !m.Held() {
		t.Errorf("marks %+v", m)
	}
	node.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kubelet"},
		{Manager: FieldManager, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:unschedulable":{}}}`)}},
		{Manager: "kubectl", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:taints":{}}}`)}},
		{Manager: "broken", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{`)}},
	}
	if !ReadMarks(node).Cordoned {
		t.Error("a cordon still Drainpipe's read as another's")
	}
	node.ManagedFields = append(node.ManagedFields, metav1.ManagedFieldsEntry{Manager: "kubectl",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:unschedulable":{}}}`)}})
	if ReadMarks(node).Cordoned {
		t.Error("an operator's cordon since read as Drainpipe's")
	}
	node.Spec.Unschedulable = false
	node.ManagedFields = nil
	if ReadMarks(node).Cordoned {
		t.Error("a node uncordoned since read as cordoned")
	}
	added := metav1.NewTime(giveT0)
	oos := corev1.Taint{Key: OutOfServiceTaintKey, TimeAdded: &added}
	for _, c := range []struct {
		taint corev1.Taint
		mark  string
		want  bool
	}{
		{oos, oosMark(added), true}, {oos, "true", true}, {oos, "", false}, {oos, "2026-11-20T10:00:01Z", false},
		{corev1.Taint{Key: OutOfServiceTaintKey}, oosMark(added), false},
		{corev1.Taint{Key: TaintKey, TimeAdded: &added}, oosMark(added), false},
	} {
		if got := ownOutOfService(c.taint, c.mark); got != c.want {
			t.Errorf("taint %s (added %v), mark %q: own %v", c.taint.Key, c.taint.TimeAdded, c.mark, got)
		}
	}
	for _, k := range []string{KarpenterDisruptedTaint, KarpenterDisruptionTaintV0} {
		n := &corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: k}}}}
		if m := ReadMarks(n); !m.Karpenter || m.Held() {
			t.Errorf("taint %s: marks %+v", k, m)
		}
	}
}

// counted is a fake clientset whose requests are listed by verb.
func counted(t *testing.T, objs ...runtime.Object) (*fake.Clientset, func(verb string) int) {
	t.Helper()
	c := fake.NewClientset(objs...)
	return c, func(verb string) int {
		n := 0
		for _, a := range c.Actions() {
			if a.GetVerb() == verb {
				n++
			}
		}
		return n
	}
}

// Uncordon reads the node once and writes one patch; UncordonRead reads
// nothing; a dry run is sent as one; a node gone or a refused patch is an
// error saying so.
func TestUncordonRequests(t *testing.T) {
	ctx := context.Background()
	client, count := counted(t, heldFor(holdOf("spot-interruption", "e1", giveT0)))
	g, err := Uncordon(ctx, client, "n", Match{DryRun: true})
	if err != nil || !g.Back || count("get") != 1 || count("patch") != 1 {
		t.Fatalf("dry run: %+v, %v; %d gets, %d patches", g, err, count("get"), count("patch"))
	}
	p := client.Actions()[1].(k8stesting.PatchActionImpl)
	if !strings.Contains(string(p.GetPatch()), `"unschedulable":false`) ||
		!slices.Equal(p.GetPatchOptions().DryRun, []string{metav1.DryRunAll}) || p.GetPatchOptions().FieldManager != FieldManager {
		t.Errorf("dry run sent %s with %+v", p.GetPatch(), p.GetPatchOptions())
	}
	// The fake clientset applies a dry run: start again.
	client, count = counted(t, heldFor(holdOf("spot-interruption", "e1", giveT0)))
	node := mustGet(t, client, "n")
	client.ClearActions()
	g, err = UncordonRead(ctx, client, node, Match{})
	if err != nil || !g.Back || count("get") != 0 || count("patch") != 1 || g.Node != "n" ||
		client.Actions()[0].(k8stesting.PatchActionImpl).GetPatchOptions().DryRun != nil {
		t.Fatalf("from a read copy: %+v, %v; %d gets", g, err, count("get"))
	}
	if m := ReadMarks(mustGet(t, client, "n")); m.Held() || mustGet(t, client, "n").Spec.Unschedulable {
		t.Errorf("node still held: %+v", m)
	}
	client.ClearActions()
	if g, err := Uncordon(ctx, client, "n", Match{}); err != nil || g.Back || count("patch") != 0 ||
		g.Reason != "node carries no Drainpipe marks" {
		t.Errorf("again: %+v, %v, %d patches", g, err, count("patch"))
	}
	if _, err := Uncordon(ctx, client, "gone", Match{}); !apierrors.IsNotFound(err) ||
		!strings.HasPrefix(err.Error(), "getting node gone: ") {
		t.Errorf("node gone: %v", err)
	}
	client, count = counted(t, heldFor(holdOf("spot-interruption", "e1", giveT0)))
	client.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("refused")
	})
	if _, err := Uncordon(ctx, client, "n", Match{}); err == nil || err.Error() != "patching node n: refused" || count("patch") != 1 {
		t.Errorf("patch refused: %v after %d patches", err, count("patch"))
	}
}

func mustGet(t *testing.T, client *fake.Clientset, name string) *corev1.Node {
	t.Helper()
	n, err := client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The out-of-service taint goes on once, marked with its own time and the
// held label; a node already carrying one is left.
func TestMarkOutOfService(t *testing.T) {
	ctx := context.Background()
	client, count := counted(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}})
	wrote, err := MarkOutOfService(ctx, client, "n", giveT0.Add(1500*time.Millisecond))
	n := mustGet(t, client, "n")
	if !wrote || err != nil || len(n.Spec.Taints) != 1 || n.Annotations[AnnotationOutOfService] != "2026-11-20T10:00:01Z" ||
		n.Labels[LabelHeld] != labelHeldOn || !ReadMarks(n).OutOfSvc {
		t.Fatalf("%v, %v: node %+v", wrote, err, n)
	}
	if wrote, err := MarkOutOfService(ctx, client, "n", giveT0); wrote || err != nil || count("patch") != 1 {
		t.Errorf("again: %v, %v, %d patches", wrote, err, count("patch"))
	}
	if _, err := MarkOutOfService(ctx, client, "gone", giveT0); !apierrors.IsNotFound(err) {
		t.Errorf("node gone: %v", err)
	}
	client, _ = counted(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}})
	client.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("refused")
	})
	if wrote, err := MarkOutOfService(ctx, client, "n", giveT0); wrote || err == nil || err.Error() != "patching node n: refused" {
		t.Errorf("patch refused: %v, %v", wrote, err)
	}
}

// conflicting answers the first n node patches with 409 Conflict, as the
// API server answers a patch whose resourceVersion is stale (proved in the
// sandbox: TestUncordonReadFromStaleCopy); here only the retry bound.
func conflicting(client *fake.Clientset, n int) {
	client.PrependReactor("patch", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if n == 0 {
			return false, nil, nil
		}
		n--
		return true, nil, apierrors.NewConflict(corev1.Resource("nodes"), a.(k8stesting.PatchAction).GetName(),
			errors.New("the object has been modified"))
	})
}

// A write that conflicts reads the node again and retries, up to
// cordonAttempts patches; then the conflict is the error.
func TestNodeWritesRetryConflicts(t *testing.T) {
	ctx := context.Background()
	node := heldFor(holdOf("spot-interruption", "e1", giveT0))
	client, count := counted(t, node)
	conflicting(client, cordonAttempts-1)
	if g, err := UncordonRead(ctx, client, node, Match{}); err != nil || !g.Back || count("patch") != cordonAttempts ||
		count("get") != cordonAttempts-1 {
		t.Errorf("give-back after %d conflicts: %+v, %v; %d patches, %d gets", cordonAttempts-1, g, err, count("patch"), count("get"))
	}
	client, count = counted(t, node)
	conflicting(client, cordonAttempts)
	if _, err := Uncordon(ctx, client, "n", Match{}); !apierrors.IsConflict(err) || count("patch") != cordonAttempts {
		t.Errorf("give-back conflicting every time: %v after %d patches", err, count("patch"))
	}

	client, count = counted(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}})
	conflicting(client, cordonAttempts-1)
	if wrote, err := MarkOutOfService(ctx, client, "n", giveT0); !wrote || err != nil || count("patch") != cordonAttempts {
		t.Errorf("out of service after %d conflicts: %v, %v; %d patches", cordonAttempts-1, wrote, err, count("patch"))
	}
	client, count = counted(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}})
	conflicting(client, cordonAttempts)
	if _, err := MarkOutOfService(ctx, client, "n", giveT0); !apierrors.IsConflict(err) || count("patch") != cordonAttempts {
		t.Errorf("out of service conflicting every time: %v after %d patches", err, count("patch"))
	}

	client, count = counted(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}})
	conflicting(client, cordonAttempts-1)
	if err := RecordActed(ctx, client, "n", "k"); err != nil || count("patch") != cordonAttempts ||
		!slices.Equal(actedKeys(mustGet(t, client, "n")), []string{"k"}) {
		t.Errorf("acted record after %d conflicts: %v; %d patches", cordonAttempts-1, err, count("patch"))
	}
	client, count = counted(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}})
	conflicting(client, cordonAttempts)
	if err := RecordActed(ctx, client, "n", "k"); !apierrors.IsConflict(err) || count("patch") != cordonAttempts {
		t.Errorf("acted record conflicting every time: %v after %d patches", err, count("patch"))
	}
}
