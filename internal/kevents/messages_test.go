package kevents

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/drainpipe/drainpipe/internal/drain"
)

// The messages are what an operator reads in `kubectl describe`: each
// part appears exactly when its field is set.
func TestStartMessage(t *testing.T) {
	tests := []struct {
		name string
		req  drain.Request
		want string
	}{
		{"drain with event and deadline", spotReq(),
			"Cordoning and draining the node: spot interruption (event ev-1); the instance goes at 2026-11-20T10:02:00Z"},
		{"cordon alone", drain.Request{Kind: "rebalance-recommendation"},
			"Cordoning the node: rebalance recommendation"},
		{"deadline in another zone", drain.Request{Kind: "asg-lifecycle", Evict: true,
			Deadline: deadline.In(time.FixedZone("x", 3600))},
			"Cordoning and draining the node: asg lifecycle; the instance goes at 2026-11-20T10:02:00Z"},
	}
	for _, tt := range tests {
		if got := startMessage(tt.req); got != tt.want {
			t.Errorf("%s: startMessage = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestEvictedMessage(t *testing.T) {
	tests := []struct {
		grace int64
		req   drain.Request
		want  string
	}{
		{-1, spotReq(), "Evicted from node n1: spot interruption; the instance goes at 2026-11-20T10:02:00Z"},
		{0, spotReq(), "Evicted from node n1: spot interruption, grace period shortened to 0s; the instance goes at 2026-11-20T10:02:00Z"},
		{7, drain.Request{Kind: "scheduled-change"}, "Evicted from node n1: scheduled change, grace period shortened to 7s"},
	}
	for _, tt := range tests {
		if got := evictedMessage(tt.req, drain.Event{Node: "n1", GraceSeconds: tt.grace}); got != tt.want {
			t.Errorf("grace %d: evictedMessage = %q, want %q", tt.grace, got, tt.want)
		}
	}
}

func TestNoticeMessage(t *testing.T) {
	const tail = "; annotation " + drain.AnnotationInterruption + " carries the details"
	tests := []struct {
		detail string
		req    drain.Request
		want   string
	}{
		{`{"kind":"spot-interruption","evictAt":"2026-11-20T10:01:00Z"}`, spotReq(),
			"Node n1 is being drained: spot interruption (event ev-1); the instance goes at 2026-11-20T10:02:00Z; this pod is evicted at 2026-11-20T10:01:00Z" + tail},
		{`{"kind":"spot-interruption"}`, drain.Request{Kind: "spot-interruption"},
			"Node n1 is being drained: spot interruption" + tail},
		{"not json", drain.Request{Kind: "spot-interruption"},
			"Node n1 is being drained: spot interruption" + tail},
	}
	for _, tt := range tests {
		if got := noticeMessage(tt.req, drain.Event{Node: "n1", Detail: tt.detail}); got != tt.want {
			t.Errorf("detail %q: noticeMessage = %q, want %q", tt.detail, got, tt.want)
		}
	}
}

func TestOutcome(t *testing.T) {
	pods := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("ns/p%d", i))
		}
		return out
	}
	cordon := spotReq()
	cordon.Evict = false
	noDeadline := spotReq()
	noDeadline.Deadline = time.Time{}
	tests := []struct {
		name      string
		req       drain.Request
		rep       drain.Report
		typ, why  string
		msg       string
		announced bool
	}{
		{name: "a cordon has no outcome", req: cordon, rep: drain.Report{Done: true}},
		{"drained", spotReq(), drain.Report{Done: true, Evicted: pods(2), Skipped: []drain.Skipped{{}}, Elapsed: 1234567 * time.Microsecond},
			corev1.EventTypeNormal, ReasonDrained, "Drained in 1.235s: 2 pods evicted, 1 left in place", true},
		{"blocked, budgets named", spotReq(), drain.Report{BlockedByPDB: []string{"shop/db-0", "shop/db-1"}, Blocks: []drain.Block{
			{Pod: "shop/web-1", Budget: "web", Refusals: 3, Evicted: true},
			{Pod: "shop/db-0", Budget: "db", Refusals: 4},
			{Pod: "shop/db-1"},
		}}, corev1.EventTypeWarning, ReasonDrainBlocked,
			"2 pods blocked by PodDisruptionBudgets when the drain stopped (instance deadline 2026-11-20T10:02:00Z): shop/db-0 (PodDisruptionBudget db, 4 refusals), shop/db-1", true},
		{"blocked, no blocks known", noDeadline, drain.Report{BlockedByPDB: pods(7)}, corev1.EventTypeWarning, ReasonDrainBlocked,
			"7 pods blocked by PodDisruptionBudgets when the drain stopped: ns/p0, ns/p1, ns/p2, ns/p3, ns/p4 and 2 more", true},
		{"blocked, five", noDeadline, drain.Report{BlockedByPDB: pods(5)}, corev1.EventTypeWarning, ReasonDrainBlocked,
			"5 pods blocked by PodDisruptionBudgets when the drain stopped: ns/p0, ns/p1, ns/p2, ns/p3, ns/p4", true},
		{"blocked, six", noDeadline, drain.Report{BlockedByPDB: pods(6)}, corev1.EventTypeWarning, ReasonDrainBlocked,
			"6 pods blocked by PodDisruptionBudgets when the drain stopped: ns/p0, ns/p1, ns/p2, ns/p3, ns/p4 and 1 more", true},
		{"unfinished", spotReq(), drain.Report{Terminating: pods(1), Pending: pods(2), Failed: []drain.Skipped{{}, {}, {}}},
			corev1.EventTypeWarning, ReasonDrainUnfinished, "Drain stopped unfinished: 1 pods still terminating, 2 not evicted yet, 3 refused", true},
	}
	for _, tt := range tests {
		typ, why, msg, ok := outcome(tt.req, tt.rep)
		if typ != tt.typ || why != tt.why || msg != tt.msg || ok != tt.announced {
			t.Errorf("%s: outcome = %q %q %q %v\nwant %q %q %q %v", tt.name, typ, why, msg, ok, tt.typ, tt.why, tt.msg, tt.announced)
		}
	}
}

func TestTruncate(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{{"abc", 3, "abc"}, {"abcd", 3, "abc"}, {"ab", 3, "ab"}} {
		if got := truncate(tt.s, tt.n); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

// An event's name keeps the object's name, cut at 200 characters, and
// each part of the key (kind, namespace, name, UID, reason, event id)
// tells two events apart, also where the parts' boundaries move.
func TestEventNameParts(t *testing.T) {
	base := corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "web-1", UID: "u"}
	name := eventName(base, "Drained", "ev-1")
	if !strings.HasPrefix(name, "web-1.drainpipe.") || len(name) != len("web-1.drainpipe.")+16 {
		t.Errorf("eventName = %q, want web-1.drainpipe. and 16 hex digits", name)
	}
	long := base
	long.Name = strings.Repeat("p", 201)
	if got := eventName(long, "Drained", "ev-1"); !strings.HasPrefix(got, strings.Repeat("p", 200)+".drainpipe.") {
		t.Errorf("eventName of a 201-character name = %q, want its first 200 characters", got)
	}
	seen := map[string]string{name: "base"}
	for what, ref := range map[string]corev1.ObjectReference{
		"kind":      {Kind: "Node", Namespace: "ns", Name: "web-1", UID: "u"},
		"namespace": {Kind: "Pod", Namespace: "other", Name: "web-1", UID: "u"},
		"uid":       {Kind: "Pod", Namespace: "ns", Name: "web-1", UID: "v"},
		"boundary":  {Kind: "Pod", Namespace: "nsw", Name: "eb-1", UID: "u"},
	} {
		n := eventName(ref, "Drained", "ev-1")
		if prev, dup := seen[n]; dup {
			t.Errorf("%s: same event name as %s", what, prev)
		}
		seen[n] = what
	}
	if eventName(base, "DrainBlocked", "ev-1") == name {
		t.Error("two reasons share an event name")
	}
}

func TestDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	if o.Component != DefaultComponent || o.Timeout != DefaultTimeout || o.Flush != DefaultFlush ||
		o.Workers != DefaultWorkers || o.MaxPodEvents != DefaultMaxPodEvents || o.OnError == nil || o.Log == nil {
		t.Errorf("zero Options with defaults = %+v", o)
	}
	set := Options{Component: "c", Timeout: time.Second, Flush: 3 * time.Second, Workers: 1, MaxPodEvents: 1}
	got := set.withDefaults()
	if got.Component != "c" || got.Timeout != time.Second || got.Flush != 3*time.Second || got.Workers != 1 || got.MaxPodEvents != 1 {
		t.Errorf("set Options with defaults = %+v, want them kept", got)
	}
}
