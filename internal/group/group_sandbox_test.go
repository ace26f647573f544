package group_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/group"
	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

const runTimeout = 60 * time.Second

// scene is one test's nodes, all of one Auto Scaling group, with the slot
// Leases in the test's namespace.
type scene struct {
	env   *fixture.Env
	nodes []*corev1.Node
	asg   string
}

func newScene(t *testing.T, ctx context.Context, n int) *scene {
	t.Helper()
	env := fixture.New(t, sandbox.ForTest(t).RESTConfig())
	return &scene{env: env, nodes: env.Nodes(ctx, n, fixture.NodeOptions{}), asg: "asg-" + env.Pool}
}

// limiter is a Limiter for the scene: its pool label counts the group.
func (s *scene) limiter(max group.Limit, lease time.Duration) *group.Limiter {
	return group.New(group.Config{Max: max, Label: fixture.PoolLabel, Namespace: s.env.Namespace,
		LeaseDuration: lease, Poll: 50 * time.Millisecond}, nil)
}

func (s *scene) group() group.Group {
	return group.Group{Name: "asg/" + s.asg}
}

// once takes a slot for node without waiting: the context ends as soon as
// Enter would wait, so a group with every slot held answers Busy.
func (s *scene) once(ctx context.Context, l *group.Limiter, node string) (*group.Slot, *group.Busy, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	slot, err := l.Enter(ctx, s.env.Client, group.Who{Node: node, ASG: s.asg}, func(group.Busy) { cancel() })
	var busy *group.Busy
	if errors.As(err, &busy) {
		return nil, busy, nil
	}
	return slot, nil, err
}

// holders lists the holders of the group's Leases, as an operator sees them.
func (s *scene) holders(ctx context.Context, t *testing.T) []string {
	t.Helper()
	list, err := s.env.Client.CoordinationV1().Leases(s.env.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: group.HashLabel + "=" + s.group().Hash(),
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, le := range list.Items {
		out = append(out, *le.Spec.HolderIdentity)
	}
	slices.Sort(out)
	return out
}

// race has every node take a slot at once, without waiting.
func (s *scene) race(ctx context.Context, t *testing.T, l *group.Limiter) (held map[string]*group.Slot, busy []*group.Busy) {
	t.Helper()
	slots := make([]*group.Slot, len(s.nodes))
	busies := make([]*group.Busy, len(s.nodes))
	errs := make([]error, len(s.nodes))
	var wg sync.WaitGroup
	for i, n := range s.nodes {
		wg.Go(func() { slots[i], busies[i], errs[i] = s.once(ctx, l, n.Name) })
	}
	wg.Wait()
	held = map[string]*group.Slot{}
	for i, n := range s.nodes {
		switch {
		case errs[i] != nil:
			t.Fatalf("node %s: %v", n.Name, errs[i])
		case slots[i] != nil:
			held[n.Name] = slots[i]
		default:
			busy = append(busy, busies[i])
		}
	}
	return held, busy
}

// Eight nodes racing for three slots: three get one, five are told who
// holds them, and the cluster shows exactly three Leases; a released
// slot goes to the next taker.
func TestConcurrentTakersNeverExceedTheLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	s := newScene(t, ctx, 8)
	l := s.limiter(group.Limit{N: 3}, time.Minute)

	held, busy := s.race(ctx, t, l)
	if len(held) != 3 || len(busy) != 5 {
		t.Fatalf("%d slots taken and %d nodes told to wait; want 3 and 5", len(held), len(busy))
	}
	names := map[string]bool{}
	for node, slot := range held {
		if names[slot.Name()] {
			t.Errorf("two nodes hold %s", slot.Name())
		}
		names[slot.Name()] = true
		if slot.Group().Name != s.group().Name {
			t.Errorf("%s holds a slot of group %s", node, slot.Group().Name)
		}
	}
	for _, b := range busy {
		for _, h := range b.Holders {
			if held[h] == nil || b.Slots != 3 {
				t.Errorf("busy %+v names %s, which holds no slot (or slots ≠ 3)", b, h)
			}
		}
	}
	want := slices.Sorted(maps.Keys(held))
	if got := s.holders(ctx, t); !slices.Equal(got, want) {
		t.Errorf("Lease holders %v, want %v", got, want)
	}

	var freed string
	for n, slot := range held {
		freed = n
		if err := slot.Release(ctx); err != nil {
			t.Fatal(err)
		}
		break
	}
	var waiting []string
	for _, n := range s.nodes {
		if held[n.Name] == nil {
			waiting = append(waiting, n.Name)
		}
	}
	if slot, b, err := s.once(ctx, l, waiting[0]); err != nil || slot == nil {
		t.Fatalf("after %s released its slot, %s got %v, %+v, %v; want the slot", freed, waiting[0], slot, b, err)
	}
	if slot, _, err := s.once(ctx, l, waiting[1]); err != nil || slot != nil {
		t.Fatalf("%s got a fourth slot (%v, %v)", waiting[1], slot, err)
	}
}

// A redelivery of a node's drain (another invocation) finds the node's
// own slot and renews it rather than waiting behind it.
func TestRedeliveryRenewsItsOwnSlot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	s := newScene(t, ctx, 2)
	a, b := s.nodes[0].Name, s.nodes[1].Name
	first, _, err := s.once(ctx, s.limiter(group.Limit{N: 1}, time.Minute), a)
	if err != nil || first == nil {
		t.Fatalf("first delivery: %v, %v", first, err)
	}
	again, _, err := s.once(ctx, s.limiter(group.Limit{N: 1}, time.Minute), a)
	if err != nil || again == nil || again.Name() != first.Name() {
		t.Fatalf("redelivery got %v, %v; want its own slot %s", again, err, first.Name())
	}
	if _, busy, err := s.once(ctx, s.limiter(group.Limit{N: 1}, time.Minute), b); err != nil || busy == nil ||
		!slices.Equal(busy.Holders, []string{a}) {
		t.Fatalf("another node: busy %+v, %v; want it told %s holds the slot", busy, err, a)
	}
}

// A slot whose holder stopped renewing (its invocation was killed) is
// taken over once its duration has passed; a live one is not.
func TestExpiredSlotIsTakenOver(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	s := newScene(t, ctx, 1)
	node := s.nodes[0].Name
	l := s.limiter(group.Limit{N: 1}, time.Minute)
	live := *s
	live.asg = "live-" + s.env.Pool
	s.leftLease(ctx, t, live.group(), "busy-node", time.Now(), 3600)
	if slot, busy, err := live.once(ctx, l, node); err != nil || slot != nil || !slices.Equal(busy.Holders, []string{"busy-node"}) {
		t.Fatalf("a group whose slot is renewed: %v, busy %+v, %v; want busy-node named", slot, busy, err)
	}
	dead := s.group()
	s.leftLease(ctx, t, dead, "killed-node", time.Now().Add(-10*time.Minute), 60)
	slot, busy, err := s.once(ctx, l, node)
	if err != nil || slot == nil {
		t.Fatalf("Enter = %v, busy %+v, %v; want the expired slot", slot, busy, err)
	}
	le, err := s.env.Client.CoordinationV1().Leases(s.env.Namespace).Get(ctx, dead.SlotName(0), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *le.Spec.HolderIdentity != node || le.Spec.LeaseTransitions == nil || *le.Spec.LeaseTransitions != 1 {
		t.Errorf("slot after the takeover: holder %s, transitions %v; want %s, 1", *le.Spec.HolderIdentity, le.Spec.LeaseTransitions, node)
	}
}

// leftLease creates slot 0 of g as another invocation left it.
func (s *scene) leftLease(ctx context.Context, t *testing.T, g group.Group, holder string, renewed time.Time, secs int32) {
	t.Helper()
	at := metav1.NewMicroTime(renewed)
	_, err := s.env.Client.CoordinationV1().Leases(s.env.Namespace).Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: g.SlotName(0), Labels: map[string]string{group.HashLabel: g.Hash()}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &at, RenewTime: &at},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// A percentage counts the group's nodes: 40 % of five nodes is two slots.
func TestPercentageCountsTheGroupsNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	s := newScene(t, ctx, 5)
	held, busy := s.race(ctx, t, s.limiter(group.Limit{Percent: 40}, time.Minute))
	if len(held) != 2 || len(busy) != 3 {
		t.Fatalf("%d slots taken and %d told to wait; want 2 and 3", len(held), len(busy))
	}
}

// Release deletes only the Lease the slot still holds: one taken over
// after it expired stays with its new holder.
func TestReleaseSparesATakenOverSlot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	s := newScene(t, ctx, 2)
	a, b := s.nodes[0].Name, s.nodes[1].Name
	l := s.limiter(group.Limit{N: 1}, time.Minute)
	slotA, _, err := s.once(ctx, l, a)
	if err != nil || slotA == nil {
		t.Fatalf("a: %v, %v", slotA, err)
	}
	leases := s.env.Client.CoordinationV1().Leases(s.env.Namespace)
	le, err := leases.Get(ctx, s.group().SlotName(0), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old := metav1.NewMicroTime(time.Now().Add(-time.Hour))
	le.Spec.RenewTime = &old // a's invocation stalled past its duration
	if _, err := leases.Update(ctx, le, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	slotB, _, err := s.once(ctx, l, b)
	if err != nil || slotB == nil {
		t.Fatalf("b: %v, %v; want the expired slot", slotB, err)
	}
	if err := slotA.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.holders(ctx, t); !slices.Equal(got, []string{b}) {
		t.Fatalf("after a's late release, holders %v; want [%s]", got, b)
	}
	if err := slotB.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := leases.Get(ctx, s.group().SlotName(0), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after b's release: %v, want the Lease gone", err)
	}
}

// Keep renews the slot while the drain runs.
func TestKeepRenewsTheSlot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	s := newScene(t, ctx, 1)
	slot, _, err := s.once(ctx, s.limiter(group.Limit{N: 1}, 3*time.Second), s.nodes[0].Name)
	if err != nil || slot == nil {
		t.Fatalf("%v, %v", slot, err)
	}
	w := watchLease(ctx, t, s.env.Client, s.env.Namespace, s.group().SlotName(0))
	defer w.Stop()
	stop := slot.Keep(ctx)
	defer stop()
	var first *metav1.MicroTime
	for ev := range w.ResultChan() {
		le, ok := ev.Object.(*coordinationv1.Lease)
		if !ok {
			continue
		}
		if first == nil {
			first = le.Spec.RenewTime
			continue
		}
		if le.Spec.RenewTime.After(first.Time) {
			return
		}
	}
	t.Fatal("the watch ended before the slot was renewed")
}

func watchLease(ctx context.Context, t *testing.T, c kubernetes.Interface, ns, name string) watch.Interface {
	t.Helper()
	w, err := c.CoordinationV1().Leases(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		t.Fatal(err)
	}
	return w
}
