package drain

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

var noticeNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// noticeScene is a Run's evicting part over pods on the fake clientset,
// its announcements and log kept.
type noticeScene struct {
	r      *run
	client *fake.Clientset
	mu     sync.Mutex
	events []Event
	logs   bytes.Buffer
}

func newNoticeScene(t *testing.T, cfg Config, pods ...corev1.Pod) *noticeScene {
	t.Helper()
	s := &noticeScene{}
	cfg.Announce = func(_ context.Context, e Event) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.events = append(s.events, e)
	}
	s.client = fake.NewClientset()
	for i := range pods {
		if _, err := s.client.CoreV1().Pods("ns").Create(context.Background(), &pods[i], metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	d := New(s.client, cfg, nil)
	d.now = func() time.Time { return noticeNow }
	req := Request{Node: "n1", Kind: "spot-interruption", EventID: "e1", Deadline: noticeNow.Add(2 * time.Minute), Evict: true}
	r, err := d.newRun(context.Background(), req, slog.New(slog.NewJSONHandler(&s.logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	r.ctx = context.Background()
	s.r = r
	return s
}

// announce announces the target of pod name and returns the pod's
// interruption annotation after.
func (s *noticeScene) announce(t *testing.T, name string) (*target, string) {
	t.Helper()
	tg := s.r.targets["ns/"+name]
	if tg == nil {
		t.Fatalf("no target %s among %v", name, s.r.targets)
	}
	s.r.announce(tg)
	p, err := s.client.CoreV1().Pods("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return tg, ""
	}
	return tg, p.Annotations[AnnotationInterruption]
}

func annotated(kv ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Annotations = map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			p.Annotations[kv[i]] = kv[i+1]
		}
	}
}

// A pod that asked for notice is told when it will be evicted, once; a
// Run resumed on the same warning keeps the time it was given; another
// event's warning gets a time of its own.
func TestAnnounceNoticePeriod(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NoticePeriod = 30 * time.Second
	deadline := noticeNow.Add(2 * time.Minute).UTC().Format(annotationTimeLayout)
	evictAt := noticeNow.Add(30 * time.Second).UTC().Format(annotationTimeLayout)
	given := Interruption{Kind: "spot-interruption", Deadline: deadline, EventID: "e1", EvictAt: "2026-11-22T12:00:10Z"}
	older := Interruption{Kind: "spot-interruption", Deadline: deadline, EventID: "e0", EvictAt: "2026-11-22T12:00:10Z"}
	unset := Interruption{Kind: "spot-interruption", Deadline: deadline, EventID: "e1"}
	s := newNoticeScene(t, cfg,
		pod("fresh", ownedBy("ReplicaSet", "rs"), annotated(AnnotationNotice, "true")),
		pod("resumed", ownedBy("ReplicaSet", "rs"), annotated(AnnotationNotice, "true", AnnotationInterruption, given.encode())),
		pod("older", ownedBy("ReplicaSet", "rs"), annotated(AnnotationNotice, "true", AnnotationInterruption, older.encode())),
		pod("unset", ownedBy("ReplicaSet", "rs"), annotated(AnnotationNotice, "true", AnnotationInterruption, unset.encode())),
		pod("other", ownedBy("ReplicaSet", "rs")))

	want := Interruption{Kind: "spot-interruption", Deadline: deadline, EventID: "e1", EvictAt: evictAt}.encode()
	tg, got := s.announce(t, "fresh")
	if got != want || !tg.evictAt.Equal(noticeNow.Add(30*time.Second)) {
		t.Errorf("fresh pod: annotation %s, evictAt %v; want %s", got, tg.evictAt, want)
	}
	if len(s.events) != 1 || s.events[0] != (Event{Type: EventNotice, Node: "n1", Pod: "ns/fresh", PodUID: "uid-fresh",
		Detail: want, GraceSeconds: -1}) {
		t.Errorf("announced %+v", s.events)
	}
	s.r.announce(tg)
	if len(s.events) != 1 {
		t.Errorf("announced twice: %+v", s.events)
	}

	s.client.ClearActions()
	tg, got = s.announce(t, "resumed")
	if got != given.encode() || !tg.evictAt.Equal(noticeNow.Add(10*time.Second)) || len(s.client.Actions()) != 1 {
		t.Errorf("resumed: annotation %s, evictAt %v, requests %v; want the time given before, unwritten", got, tg.evictAt,
			s.client.Actions())
	}
	for _, name := range []string{"older", "unset"} {
		if _, got := s.announce(t, name); got != want {
			t.Errorf("%s: annotation %s, want %s", name, got, want)
		}
	}
	if _, got := s.announce(t, "other"); got != "" || len(s.events) != 3 {
		t.Errorf("a pod that asked for nothing, without DRAINPIPE_WARN_ALL: annotation %q, %d announcements", got, len(s.events))
	}
}

// With WarnAll every pod is told what is coming, without an eviction
// time unless it asked for notice; a pod gone meanwhile is no error.
func TestAnnounceWarnAll(t *testing.T) {
	cfg := DefaultConfig()
	cfg.WarnAll = true
	s := newNoticeScene(t, cfg, pod("a", ownedBy("ReplicaSet", "rs")), pod("gone", ownedBy("ReplicaSet", "rs")))
	deadline := noticeNow.Add(2 * time.Minute).UTC().Format(annotationTimeLayout)
	tg, got := s.announce(t, "a")
	if want := (Interruption{Kind: "spot-interruption", Deadline: deadline, EventID: "e1"}).encode(); got != want || !tg.evictAt.IsZero() {
		t.Errorf("annotation %s, evictAt %v; want %s", got, tg.evictAt, want)
	}
	if err := s.client.CoreV1().Pods("ns").Delete(context.Background(), "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.announce(t, "gone")
	if strings.Contains(s.logs.String(), "annotating pod") {
		t.Errorf("a pod gone was logged: %s", s.logs.String())
	}
}

// Warning every pod leaves out the pods already terminating: they are not
// evicted.
func TestAnnounceAllWarnsOnlyPodsToBeEvicted(t *testing.T) {
	cfg := DefaultConfig()
	cfg.WarnAll = true
	s := newNoticeScene(t, cfg, pod("a", ownedBy("ReplicaSet", "rs")),
		pod("leaving", ownedBy("ReplicaSet", "rs"), func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: noticeNow} }))
	s.r.announceAll()
	var warned []string
	for _, e := range s.events {
		warned = append(warned, e.Pod)
	}
	if len(warned) != 1 || warned[0] != "ns/a" {
		t.Errorf("warned %v, want [ns/a]", warned)
	}
}

// A pod whose notice has ended, even at this very moment, goes on to its
// eviction though the Run is stopping (every pod gets at least one
// eviction sent); a pod still under notice does not.
func TestAwaitNoticeGoesOnOnceTheNoticeEnds(t *testing.T) {
	stopped, stop := context.WithCancel(context.Background())
	stop()
	d := New(nil, DefaultConfig(), nil)
	d.now = func() time.Time { return noticeNow }
	r := &run{d: d, stop: stopped}
	tests := []struct {
		name    string
		evictAt time.Time
		want    bool
	}{
		{"no notice", time.Time{}, true},
		{"ended", noticeNow.Add(-time.Second), true},
		{"ends now", noticeNow, true},
		{"under notice", noticeNow.Add(time.Hour), false},
	}
	for _, tt := range tests {
		// Many times: the answer must not depend on which of the stop and
		// the notice's end is seen first.
		for range 100 {
			if got := r.awaitNotice(&target{evictAt: tt.evictAt, gone: make(chan struct{})}); got != tt.want {
				t.Errorf("%s: awaitNotice = %v, want %v", tt.name, got, tt.want)
				break
			}
		}
	}
}

func TestParseInterruption(t *testing.T) {
	for _, bad := range []string{"", "{", "[]"} {
		if _, err := ParseInterruption(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	in := Interruption{Kind: "k", EventID: "e", EvictAt: "2026-11-22T12:00:00Z"}
	if got, err := ParseInterruption(in.encode()); err != nil || got != in {
		t.Errorf("%+v, %v; want %+v", got, err, in)
	}
}
