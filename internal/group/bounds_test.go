package group

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A slot Lease lapses exactly when its renew time plus its duration has
// come, not a nanosecond before.
func TestExpired(t *testing.T) {
	l := New(Config{Max: Limit{N: 1}, LeaseDuration: time.Minute}, nil)
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	micro := metav1.NewMicroTime(at)
	secs := int32(30)
	for _, tc := range []struct {
		name string
		spec coordinationv1.LeaseSpec
		now  time.Time
		want bool
	}{
		{"never renewed or acquired", coordinationv1.LeaseSpec{}, at, true},
		{"renewed, a nanosecond before it lapses", coordinationv1.LeaseSpec{RenewTime: &micro}, at.Add(time.Minute - 1), false},
		{"renewed, exactly when it lapses", coordinationv1.LeaseSpec{RenewTime: &micro}, at.Add(time.Minute), true},
		{"acquired only", coordinationv1.LeaseSpec{AcquireTime: &micro}, at.Add(time.Minute - 1), false},
		{"the Lease's own duration", coordinationv1.LeaseSpec{RenewTime: &micro, LeaseDurationSeconds: &secs}, at.Add(30 * time.Second), true},
		{"the Lease's own duration, before", coordinationv1.LeaseSpec{RenewTime: &micro, LeaseDurationSeconds: &secs}, at.Add(30*time.Second - 1), false},
	} {
		if got := l.expired(&coordinationv1.Lease{Spec: tc.spec}, tc.now); got != tc.want {
			t.Errorf("%s: expired = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	for _, tc := range []struct {
		in, want Config
	}{
		{Config{}, Config{Namespace: DefaultNamespace, LeaseDuration: DefaultLeaseDuration, Poll: DefaultPoll}},
		{Config{Namespace: "ns", LeaseDuration: -1, Poll: -1}, Config{Namespace: "ns", LeaseDuration: DefaultLeaseDuration, Poll: DefaultPoll}},
		{Config{LeaseDuration: 1, Poll: 1}, Config{Namespace: DefaultNamespace, LeaseDuration: 1, Poll: 1}},
	} {
		if got := tc.in.withDefaults(); got != tc.want {
			t.Errorf("withDefaults(%+v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestLimitString(t *testing.T) {
	for l, want := range map[Limit]string{{N: 3}: "3", {Percent: 1}: "1%", {Percent: 100}: "100%", {}: "0"} {
		if got := l.String(); got != want {
			t.Errorf("%#v.String() = %q, want %q", l, got, want)
		}
	}
	for _, tc := range []struct {
		l    Limit
		size int
		want int
	}{
		{Limit{Percent: 50}, 4, 2}, // exact, no rounding
		{Limit{Percent: 1}, 100, 1},
		{Limit{Percent: 1}, 101, 2},
		{Limit{N: 1}, 0, 1},
		{Limit{N: MaxSlots}, 0, MaxSlots},
		{Limit{N: MaxSlots + 1}, 0, MaxSlots},
	} {
		if got := tc.l.Slots(tc.size); got != tc.want {
			t.Errorf("%s of %d nodes: %d slots, want %d", tc.l, tc.size, got, tc.want)
		}
	}
	if (Limit{N: -1}).Off() != true || (Limit{Percent: -1}).Off() != true {
		t.Error("a negative limit is off")
	}
}

func TestSlotIndexReadsOnlyNonNegative(t *testing.T) {
	g := Group{Name: "asg/web"}
	for name, want := range map[string]bool{g.SlotName(0): true, g.Hash() + "--1": false, g.Hash() + "-x": false} {
		if _, ok := slotIndex(g, name); ok != want {
			t.Errorf("slotIndex(%q) ok = %v, want %v", name, ok, want)
		}
	}
}

// A waiting node pauses about a poll (jittered by up to a fifth more),
// however short the poll; a cancelled wait ends at once.
func TestPause(t *testing.T) {
	l := New(Config{Max: Limit{N: 1}, Poll: time.Nanosecond}, nil)
	if !l.pause(context.Background()) {
		t.Error("pause of 1ns: ended as cancelled")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l = New(Config{Max: Limit{N: 1}, Poll: time.Hour}, nil)
	if l.pause(ctx) {
		t.Error("pause with its context cancelled: waited the poll")
	}
}

// The jitter adds up to a fifth of the poll, drawn below that bound plus
// one (so a poll under five nanoseconds still draws).
func TestJittered(t *testing.T) {
	for _, tc := range []struct {
		poll, most time.Duration
	}{
		{5 * time.Second, 6 * time.Second},
		{time.Nanosecond, time.Nanosecond},
	} {
		var bound int64
		most := jittered(tc.poll, func(n int64) int64 { bound = n; return n - 1 })
		if most != tc.most || bound != int64(tc.poll)/5+1 {
			t.Errorf("jittered(%s) at most %s drawn below %d, want %s below %d", tc.poll, most, bound, tc.most, int64(tc.poll)/5+1)
		}
		if least := jittered(tc.poll, func(int64) int64 { return 0 }); least != tc.poll {
			t.Errorf("jittered(%s) at least %s, want the poll", tc.poll, least)
		}
	}
}

// A node's first slot to try is one of the group's.
func TestOffsetWithinTheSlots(t *testing.T) {
	for _, slots := range []int{1, 2, 3, 7} {
		for _, node := range []string{"a", "ip-10-0-1-7.ec2.internal", "node-42"} {
			if o := offset(node, slots); o < 0 || o >= slots {
				t.Errorf("offset(%s, %d) = %d, want one of the slots", node, slots, o)
			}
		}
	}
}
