package drain

import (
	"context"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/drainpipe/drainpipe/internal/hold"
)

func heldNode(name string, deadline time.Time, report string) *corev1.Node {
	// Every held node carries its kind beside its marks.
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{LabelHeld: labelHeldOn},
		Annotations: map[string]string{AnnotationKind: "asg-lifecycle"}}}
	if !deadline.IsZero() {
		n.Annotations[AnnotationKind] = "spot-interruption"
		n.Annotations[AnnotationDeadline] = deadline.UTC().Format(annotationTimeLayout)
	}
	if report != "" {
		n.Annotations[AnnotationReport] = report
	}
	return n
}

// A drain without a deadline yields to the wave's drains racing one: the
// deadline at risk is the latest, within five minutes, of a held node
// whose drain has not reported done; a scheduled event days ahead, a
// deadline past, a drain done or with every pod evicted and the node's own
// mark hold nothing back.
// An instance lists the held nodes at most every five seconds for all its
// drains.
func TestDeadlinesAtRisk(t *testing.T) {
	now := time.Unix(1e9, 0)
	objs := []runtime.Object{
		heldNode("spot-draining", now.Add(90*time.Second), `{"state":"draining"}`),
		heldNode("spot-new", now.Add(100*time.Second), ""),
		heldNode("spot-done", now.Add(110*time.Second), `{"state":"done"}`),
		// Every pod evicted, only grace periods left: nothing to yield to.
		heldNode("spot-evicted", now.Add(105*time.Second), `{"state":"evicted"}`),
		heldNode("scheduled", now.Add(72*time.Hour), ""),
		heldNode("reclaimed", now.Add(-time.Second), ""),
		heldNode("hook", time.Time{}, ""),
		heldNode("self", now.Add(115*time.Second), ""),
	}
	client := fake.NewClientset(objs...)
	lists := 0
	client.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		lists++
		return false, nil, nil
	})
	d := New(client, DefaultConfig(), nil)
	d.now = func() time.Time { return now }
	log := slog.New(slog.DiscardHandler)
	var dl deadlines
	self := func(n string) bool { return n == "self" }
	if got, _ := d.atRisk(context.Background(), &dl, self, log); !got.Equal(now.Add(100 * time.Second)) {
		t.Errorf("deadline at risk %v, want spot-new's %v", got, now.Add(100*time.Second))
	}
	now = now.Add(yieldRecheck / 2)
	d.atRisk(context.Background(), &dl, self, log)
	if lists != 1 {
		t.Errorf("%d lists within %s, want 1", lists, yieldRecheck)
	}
	for _, name := range []string{"spot-draining", "spot-new"} {
		n, err := client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Annotations[AnnotationReport] = `{"state":"done"}`
		if _, err := client.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(yieldRecheck)
	if got, _ := d.atRisk(context.Background(), &dl, self, log); !got.IsZero() {
		t.Errorf("with every Spot drain done, deadline at risk %v, want none", got)
	}
}

// A hook's drain under a pace holds its evictions while a Spot drain of
// the wave is still racing its deadline, and until the Run stops; a drain
// with a deadline, or without a pace, goes at once.
func TestHookDrainYieldsToTheWavesDeadlines(t *testing.T) {
	now := time.Now()
	client := fake.NewClientset(heldNode("spot", now.Add(time.Minute), `{"state":"draining"}`))
	listed := make(chan struct{}, 1)
	client.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		select {
		case listed <- struct{}{}:
		default:
		}
		return false, nil, nil
	})
	cfg := DefaultConfig()
	cfg.Pace = NewPace(200, 10)
	d := New(client, cfg, nil)
	log := slog.New(slog.DiscardHandler)
	run := func(ctx context.Context, d *Drainer, deadline time.Time) *run {
		r := &run{d: d, log: log, req: Request{Node: "n1", Kind: "asg-lifecycle-termination", Deadline: deadline}}
		r.ctx, r.stop = ctx, ctx
		return r
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-listed // the drain has asked whether a deadline is at risk
		cancel()
	}()
	if run(ctx, d, time.Time{}).yield() {
		t.Error("a hook's drain went on while a Spot drain raced its deadline")
	}
	if !run(context.Background(), d, now.Add(2*time.Minute)).yield() {
		t.Error("a drain with a deadline yielded")
	}
	if !run(context.Background(), New(client, DefaultConfig(), nil), time.Time{}).yield() {
		t.Error("a drain without a pace yielded")
	}
}

// An instance's share keeps to the fair share while other drains are
// under way: held nodes, not its own, first cordoned within five minutes
// (five minutes ago is not within), whose drains have not reported done.
// A lone drain's does not.
func TestOtherDrainsKeepTheShareFair(t *testing.T) {
	now := time.Unix(1e9, 0)
	held := func(name string, first time.Time, report string) *corev1.Node {
		n := heldNode(name, time.Time{}, report)
		n.Annotations[AnnotationFirstSeen] = first.UTC().Format(annotationTimeLayout)
		return n
	}
	client := fake.NewClientset(
		held("mine", now.Add(-time.Second), ""),
		held("finished", now.Add(-time.Minute), `{"state":"done"}`),
		held("long-held", now.Add(-time.Hour), `{"state":"draining"}`),
		held("held-five-minutes", now.Add(-yieldHorizon), ""),
	)
	d := New(client, DefaultConfig(), nil)
	d.now = func() time.Time { return now }
	log := slog.New(slog.DiscardHandler)
	p := newPace(200, 10, &fakeClock{now: now})
	defer p.drainingNode("mine")()
	if _, crowded := d.atRisk(context.Background(), &p.deadlines, p.draining, log); crowded {
		t.Error("a lone drain counted as crowded")
	}
	if _, err := client.CoreV1().Nodes().Create(context.Background(), held("theirs", now.Add(-time.Second), ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(yieldRecheck)
	_, crowded := d.atRisk(context.Background(), &p.deadlines, p.draining, log)
	if !crowded {
		t.Fatal("another instance's drain under way: not crowded")
	}
	p.share.rate = 200
	p.crowd(true)
	if p.share.rate != 20 || p.seats.limit != 3 {
		t.Errorf("crowded: rate %.0f with %d seats, want the fair 20 with 3", p.share.rate, p.seats.limit)
	}
	for range 20 {
		p.answered(now, nil)
	}
	if p.share.rate != 20 {
		t.Errorf("crowded, fast answers raised the share to %.0f", p.share.rate)
	}
}

// A drain counts its node as the instance's own from before its cordon:
// the drains of a batch, started together, cordon one another's nodes and
// must not take them for other instances' (which would hold the share to
// the fair one while the instance drains alone).
func TestADrainsNodeIsItsOwnFromTheCordon(t *testing.T) {
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", ResourceVersion: "7"}})
	cfg := DefaultConfig()
	cfg.Pace = NewPace(200, 10)
	own := false
	client.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		own = cfg.Pace.draining("n1")
		return false, nil, nil
	})
	if _, err := New(client, cfg, nil).Run(context.Background(), Request{Node: "n1", Kind: "asg-lifecycle-termination"}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !own {
		t.Error("the node was cordoned before the instance counted it as its own")
	}
	if cfg.Pace.draining("n1") {
		t.Error("the node is still counted after its drain ended")
	}
}

// Two drains of one node at once count it as the instance's own until both end; then the instance forgets it.
func TestPaceCountsEachDrainOfANode(t *testing.T) {
	p := newPace(200, 10, &fakeClock{now: time.Unix(1e9, 0)})
	first, second := p.drainingNode("n1"), p.drainingNode("n1")
	first()
	if !p.draining("n1") {
		t.Error("one of two drains ended: the node no longer counted as the instance's own")
	}
	second()
	if p.draining("n1") || len(p.nodes) != 0 {
		t.Errorf("both drains ended: draining %v, %d nodes still counted", p.draining("n1"), len(p.nodes))
	}
}

// A node held for several threats is at risk by its earliest deadline to
// come, not by the single-hold marks, which name the newest hold: a Spot
// warning then a scheduled change days ahead still holds hook drains back
// until the Spot deadline; a hold whose deadline passed holds nothing. A
// deadline five minutes ahead is at risk, one a second further is not.
func TestDeadlineAtRiskIsTheEarliestOfTheHolds(t *testing.T) {
	now := time.Unix(1e9, 0)
	stamp := func(d time.Duration) string { return now.Add(d).UTC().Format(annotationTimeLayout) }
	spot := hold.Hold{Kind: "spot-interruption", ID: "e1", Deadline: stamp(90 * time.Second), Since: stamp(-10 * time.Second)}
	scheduled := hold.Hold{Kind: "scheduled-change", ID: "e2", Deadline: stamp(72 * time.Hour), Since: stamp(0)}
	passed := hold.Hold{Kind: "spot-interruption", ID: "e3", Deadline: stamp(-time.Second), Since: stamp(-3 * time.Minute)}
	both := heldNode("spot-then-scheduled", now.Add(72*time.Hour), "")
	both.Annotations[AnnotationKind] = scheduled.Kind
	both.Annotations[AnnotationHolds] = hold.Set{spot, scheduled}.Encode()
	gone := heldNode("passed-then-scheduled", now.Add(72*time.Hour), "")
	gone.Annotations[AnnotationKind] = scheduled.Kind
	gone.Annotations[AnnotationHolds] = hold.Set{passed, scheduled}.Encode()
	for _, c := range []struct {
		node *corev1.Node
		want time.Time
	}{
		{both, now.Add(90 * time.Second)},
		{gone, time.Time{}},
		{heldNode("at-the-horizon", now.Add(yieldHorizon), ""), now.Add(yieldHorizon)},
		{heldNode("past-the-horizon", now.Add(yieldHorizon+time.Second), ""), time.Time{}},
	} {
		d := New(fake.NewClientset(c.node), DefaultConfig(), nil)
		d.now = func() time.Time { return now }
		var dl deadlines
		got, _ := d.atRisk(context.Background(), &dl, func(string) bool { return false }, slog.New(slog.DiscardHandler))
		if !got.Equal(c.want) {
			t.Errorf("%s: deadline at risk %v, want %v", c.node.Name, got, c.want)
		}
	}
}
