package kevents

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/drainpipe/drainpipe/internal/drain"
)

// A drain stopped by budgets names its first five blocked pods, each with
// the budget refusing it, and counts the others.
func TestBlockedOutcomeNamesPods(t *testing.T) {
	req := drain.Request{Evict: true, Deadline: time.Date(2026, 11, 22, 10, 2, 0, 0, time.UTC)}
	rep := drain.Report{BlockedByPDB: []string{"a/0", "a/1", "a/2", "a/3", "a/4", "a/5"}, Blocks: []drain.Block{
		{Pod: "a/0", Budget: "db", Refusals: 3}, {Pod: "a/1"}, {Pod: "a/9", Evicted: true, Budget: "web"},
		{Pod: "a/2"}, {Pod: "a/3"}, {Pod: "a/4"}, {Pod: "a/5"}}}
	typ, reason, msg, ok := outcome(req, rep)
	want := "6 pods blocked by PodDisruptionBudgets when the drain stopped (instance deadline 2026-11-22T10:02:00Z): " +
		"a/0 (PodDisruptionBudget db, 3 refusals), a/1, a/2, a/3, a/4 and 1 more"
	if !ok || typ != corev1.EventTypeWarning || reason != ReasonDrainBlocked || msg != want {
		t.Errorf("outcome = %s %s %q, want\n%q", typ, reason, msg, want)
	}
	rep.Blocks = nil
	rep.BlockedByPDB = rep.BlockedByPDB[:5]
	if _, _, msg, _ := outcome(drain.Request{Evict: true}, rep); msg !=
		"5 pods blocked by PodDisruptionBudgets when the drain stopped: a/0, a/1, a/2, a/3, a/4" {
		t.Errorf("five blocked, no refusal recorded: %q", msg)
	}
}

// What the start, eviction and notice events say: the event id when there
// is one, a grace period shortened even to 0 s, and a drain stopped with
// nothing blocked is unfinished.
func TestMessages(t *testing.T) {
	req := drain.Request{Node: "n", Kind: "spot-interruption", EventID: "ev-1", Evict: true}
	if got := startMessage(req); got != "Cordoning and draining the node: spot interruption (event ev-1)" {
		t.Errorf("start: %q", got)
	}
	if got := noticeMessage(req, drain.Event{Node: "n"}); !strings.HasPrefix(got, "Node n is being drained: spot interruption (event ev-1)") {
		t.Errorf("notice: %q", got)
	}
	req.EventID = ""
	if got := startMessage(req); got != "Cordoning and draining the node: spot interruption" {
		t.Errorf("start without an event id: %q", got)
	}
	if got := noticeMessage(req, drain.Event{Node: "n"}); strings.Contains(got, "(event") {
		t.Errorf("notice without an event id: %q", got)
	}
	for grace, want := range map[int64]string{0: "Evicted from node n: spot interruption, grace period shortened to 0s",
		-1: "Evicted from node n: spot interruption"} {
		if got := evictedMessage(req, drain.Event{Node: "n", GraceSeconds: grace}); got != want {
			t.Errorf("evicted with grace %d: %q, want %q", grace, got, want)
		}
	}
	if _, reason, _, _ := outcome(req, drain.Report{Pending: []string{"a/x"}}); reason != ReasonDrainUnfinished {
		t.Errorf("stopped with nothing blocked: %s", reason)
	}
}

// Timeouts and the flush bound left at 0 or below take their defaults.
func TestOptionDefaults(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		if o := (Options{Timeout: d, Flush: d}).withDefaults(); o.Timeout != DefaultTimeout || o.Flush != DefaultFlush {
			t.Errorf("%s: timeout %s, flush %s", d, o.Timeout, o.Flush)
		}
	}
	if o := (Options{Timeout: time.Second, Flush: time.Second}).withDefaults(); o.Timeout != time.Second || o.Flush != time.Second {
		t.Errorf("set: timeout %s, flush %s", o.Timeout, o.Flush)
	}
}

// Pod events past the cap are counted in the log; none dropped, none
// logged.
func TestDroppedPodEventsLogged(t *testing.T) {
	for _, c := range []struct {
		pods int
		want string
	}{{2, ""}, {4, `"dropped":2`}} {
		var logs bytes.Buffer
		r := New(fake.NewClientset(), Options{MaxPodEvents: 2, Log: slog.New(slog.NewJSONHandler(&logs, nil))})
		req := spotReq()
		req.Evict = false
		var evs []drain.Event
		for i := range c.pods {
			evs = append(evs, drain.Event{Type: drain.EventEvicted, Node: req.Node, Pod: fmt.Sprint("a/", i), GraceSeconds: -1})
		}
		if _, err := r.Wrap(scripted{observe: r.Observe, events: evs, rep: drain.Report{Done: true}}).Run(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if s := r.session(req.Node); s != nil {
			t.Errorf("%d pods: the ended run's session is still the node's", c.pods)
		}
		logged := strings.Contains(logs.String(), "kubernetes pod events dropped")
		if logged != (c.want != "") || !strings.Contains(logs.String(), c.want) {
			t.Errorf("%d pods: log %s", c.pods, logs.String())
		}
	}
}
