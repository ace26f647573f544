package group

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/drainpipe/drainpipe/internal/drain"
)

// Which slot a node gets, and who a full group names, over the fake
// clientset: the choice alone. Races for a slot (conflicting writes,
// preconditions) are proven on the sandbox (group_sandbox_test.go).

func fakeLimiter(max Limit, at *time.Time) *Limiter {
	l := New(Config{Max: max, Namespace: "ns", LeaseDuration: time.Minute, Poll: time.Nanosecond}, nil)
	l.now = func() time.Time { return *at }
	return l
}

func TestTryTakesFreeSlotsThenNamesTheHolders(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	l := fakeLimiter(Limit{N: 2}, &now)
	client := fake.NewClientset()
	g := Group{Name: "asg/web"}
	ctx := t.Context()
	a, _, err := l.try(ctx, client, g, 2, "node-a")
	if err != nil || a == nil {
		t.Fatalf("first node: %v, %v", a, err)
	}
	b, _, err := l.try(ctx, client, g, 2, "node-b")
	if err != nil || b == nil || b.Name() == a.Name() {
		t.Fatalf("second node: %v, %v; want the other slot than %s", b, err, a.Name())
	}
	for _, s := range []*Slot{a, b} {
		if !strings.HasPrefix(s.Name(), "ns/"+g.Hash()+"-") || s.Group() != g {
			t.Errorf("slot %s of %+v, want ns/%s-i of %+v", s.Name(), s.Group(), g.Hash(), g)
		}
	}
	c, busy, err := l.try(ctx, client, g, 2, "node-c")
	if err != nil || c != nil {
		t.Fatalf("third node: %v, %v; want busy", c, err)
	}
	if busy.Slots != 2 || strings.Join(busy.Holders, ",") != "node-a,node-b" {
		t.Errorf("busy = %+v, want 2 slots held by node-a,node-b", busy)
	}
	if got := busy.Error(); got != "all 2 drain slot(s) of group asg/web are held (by node-a, node-b)" {
		t.Errorf("Busy.Error = %q", got)
	}
	// A redelivery of node-a's drain gets its own slot back.
	again, _, err := l.try(ctx, client, g, 2, "node-a")
	if err != nil || again == nil || again.Name() != a.Name() {
		t.Errorf("node-a again: %v, %v; want its slot %s", again, err, a.Name())
	}
	// A slot lapses a lease duration after its renewal: node-c takes it
	// over, counting the transition.
	now = now.Add(time.Minute)
	c, _, err = l.try(ctx, client, g, 2, "node-c")
	if err != nil || c == nil {
		t.Fatalf("after the slots lapsed: %v, %v; want one taken over", c, err)
	}
	if tr := c.lease.Spec.LeaseTransitions; tr == nil || *tr != 1 || holder(c.lease) != "node-c" ||
		*c.lease.Spec.LeaseDurationSeconds != 60 {
		t.Errorf("taken over: %+v, want node-c's with 1 transition and 60 s", c.lease.Spec)
	}
	if err := c.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoordinationV1().Leases("ns").Get(ctx, strings.TrimPrefix(c.Name(), "ns/"), metav1.GetOptions{}); err == nil {
		t.Error("a released slot's Lease is still there")
	}
	if err := c.Release(ctx); err != nil {
		t.Errorf("releasing a slot already gone: %v", err)
	}
}

// A slot Lease beyond the group's count (the group shrank) does not count.
func TestTryIgnoresSlotsBeyondTheCount(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	g := Group{Name: "asg/web"}
	holderX, secs := "node-x", int32(60)
	renew := metav1.NewMicroTime(now)
	stale := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: g.SlotName(1), Namespace: "ns",
		Labels: map[string]string{HashLabel: g.Hash()}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holderX, LeaseDurationSeconds: &secs, RenewTime: &renew}}
	l := fakeLimiter(Limit{N: 1}, &now)
	s, busy, err := l.try(t.Context(), fake.NewClientset(stale), g, 1, "node-a")
	if err != nil || s == nil || s.Name() != "ns/"+g.SlotName(0) {
		t.Errorf("try = %v, %+v, %v; want slot 0", s, busy, err)
	}
	holderY := "node-y"
	held := stale.DeepCopy()
	held.Name, held.Spec.HolderIdentity = g.SlotName(0), &holderY
	s, busy, err = l.try(t.Context(), fake.NewClientset(stale, held), g, 1, "node-a")
	if err != nil || s != nil || strings.Join(busy.Holders, ",") != holderY {
		t.Errorf("try with slot 0 held = %v, %+v, %v; want busy, held by %s alone", s, busy, err, holderY)
	}
}

// Enter counts a percentage on the group's nodes, calls onWait once when
// every slot is held, and answers Busy when its context ends.
func TestEnterWaitsThenAnswersBusy(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	node := func(name string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{drain.NodeGroupLabel: "ng"}}}
	}
	client := fake.NewClientset(node("a"), node("b"), node("c"), node("d"), node("e"))
	l := fakeLimiter(Limit{Percent: 40}, &now) // 40 % of 5: 2 slots
	// The deadline only bounds a failure: a wait that never calls onWait
	// (hence never cancels) ends Busy with no wait counted, not a hang.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for _, n := range []string{"a", "b"} {
		if s, err := l.Enter(ctx, client, Who{Node: n, ASG: "web"}, nil); err != nil || s == nil {
			t.Fatalf("Enter(%s) = %v, %v", n, s, err)
		}
	}
	waits := 0
	_, err := l.Enter(ctx, client, Who{Node: "c", ASG: "web"}, func(b Busy) {
		waits++
		if len(b.Holders) != 2 {
			t.Errorf("onWait: %+v, want both holders", b)
		}
		cancel()
	})
	var busy *Busy
	if !errors.As(err, &busy) || busy.Slots != 2 || waits != 1 {
		t.Errorf("Enter(c) = %v after %d waits, want Busy of 2 slots after one", err, waits)
	}
	if s, err := l.Enter(t.Context(), client, Who{Node: "a"}, nil); s != nil || err != nil {
		t.Errorf("a node in no group: %v, %v; want no slot and no error", s, err)
	}
	if _, err := l.Enter(t.Context(), client, Who{Node: "nosuch", ASG: "web"}, nil); err == nil {
		t.Error("Enter for a node that does not exist: no error")
	}
}

// A node that waited takes the slot freed meanwhile, and says it waited.
func TestEnterTakesASlotFreedWhileWaiting(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "b"}})
	var logs strings.Builder
	l := fakeLimiter(Limit{N: 1}, &now)
	l.log = slog.New(slog.NewTextHandler(&logs, nil))
	// The deadline only bounds a failure (a slot never freed).
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	first, err := l.Enter(ctx, client, Who{Node: "a", ASG: "web"}, nil)
	if err != nil || first == nil {
		t.Fatalf("Enter(a) = %v, %v", first, err)
	}
	if strings.Contains(logs.String(), "after waiting") {
		t.Errorf("a node that did not wait says it waited:\n%s", logs.String())
	}
	s, err := l.Enter(ctx, client, Who{Node: "b", ASG: "web"}, func(Busy) {
		if err := first.Release(ctx); err != nil {
			t.Errorf("Release: %v", err)
		}
	})
	if err != nil || s == nil {
		t.Fatalf("Enter(b) = %v, %v; want the slot a released", s, err)
	}
	if !strings.Contains(logs.String(), "took a drain slot after waiting") {
		t.Errorf("a node that waited does not say so:\n%s", logs.String())
	}
}

// A node's own slot is renewed for the whole lease duration; a slot whose
// update finds it gone was lost to another taker, while a create answered
// NotFound (no namespace) is an error: no slot can ever be taken there.
func TestTakeAndRenewAnswers(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	g := Group{Name: "asg/web"}
	nodeA, secs, past := "node-a", int32(5), metav1.NewMicroTime(now.Add(-time.Hour))
	own := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: g.SlotName(0), Namespace: "ns",
		Labels: map[string]string{HashLabel: g.Hash()}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &nodeA, LeaseDurationSeconds: &secs, RenewTime: &past}}
	l := fakeLimiter(Limit{N: 1}, &now)
	s, _, err := l.try(t.Context(), fake.NewClientset(own), g, 1, nodeA)
	if err != nil || s == nil {
		t.Fatalf("try of the node's own slot = %v, %v", s, err)
	}
	if d := s.lease.Spec.LeaseDurationSeconds; d == nil || *d != 60 || !s.lease.Spec.RenewTime.Time.Equal(now) {
		t.Errorf("renewed lease: %v s from %v, want 60 s from %s", d, s.lease.Spec.RenewTime, now)
	}

	notFound := func(verb string) *fake.Clientset {
		c := fake.NewClientset(own.DeepCopy())
		c.PrependReactor(verb, "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewNotFound(coordinationv1.Resource("leases"), g.SlotName(0))
		})
		return c
	}
	expired := own.DeepCopy()
	expired.Spec.HolderIdentity = new("node-x")
	if _, err := l.take(t.Context(), notFound("update"), g, 0, expired, nodeA); !errors.Is(err, errLost) {
		t.Errorf("take over, the slot gone = %v, want lost", err)
	}
	if _, err := l.take(t.Context(), notFound("create"), g, 0, nil, nodeA); err == nil || errors.Is(err, errLost) {
		t.Errorf("take, the namespace missing = %v, want an error", err)
	}
}
