package drain

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var evictNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// evictScene is one pod's eviction loop over the fake clientset: the API
// answers each eviction from a script (accepted once it runs out), and
// retries come a millisecond apart.
type evictScene struct {
	r      *run
	t      *target
	client *fake.Clientset
	logs   debugLog

	mu     sync.Mutex
	events []Event
	script []error
}

func newEvictScene(t *testing.T, objs []runtime.Object, script ...error) *evictScene {
	t.Helper()
	p := pod("p", ownedBy("ReplicaSet", "rs"), func(p *corev1.Pod) { p.Labels = map[string]string{"app": "web"} })
	s := &evictScene{client: fake.NewClientset(append(objs, &p)...), script: script}
	s.client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.script) == 0 {
			return true, nil, nil
		}
		err := s.script[0]
		s.script = s.script[1:]
		return true, nil, err
	})
	cfg := DefaultConfig()
	cfg.BackoffInitial, cfg.BackoffMax = time.Millisecond, time.Millisecond
	cfg.OnEvent = func(e Event) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.events = append(s.events, e)
	}
	d := New(s.client, cfg, nil)
	d.now = func() time.Time { return evictNow }
	log := s.logs.logger()
	r, err := d.newRun(context.Background(), Request{Node: "n1", Kind: "spot-interruption", Evict: true}, log)
	if err != nil {
		t.Fatal(err)
	}
	r.ctx, r.stop = context.Background(), context.Background()
	s.r, s.t = r, r.targets["ns/p"]
	if s.t == nil {
		t.Fatalf("no target ns/p among %v", r.targets)
	}
	s.client.ClearActions()
	return s
}

// count is how many requests of verb on resource (and subresource) the
// eviction loop sent.
func (s *evictScene) count(verb, resource, sub string) int {
	n := 0
	for _, a := range s.client.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == resource && a.GetSubresource() == sub {
			n++
		}
	}
	return n
}

var podsGR = schema.GroupResource{Resource: "pods"}

func budgetRefused() error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: policyv1.DisruptionBudgetCause}}
	return err
}

// An eviction is retried until the API accepts it; the log says how many
// attempts it took. Only a budget's first refusal, in a Run or after an
// error, looks for a grant the budget may already have given.
func TestEvictRetriesUntilAccepted(t *testing.T) {
	t.Parallel()
	failing := apierrors.NewInternalError(errors.New("etcd leader changed"))
	tests := []struct {
		name         string
		script       []error
		wantAttempts string
		wantLooks    int // lists of disruption budgets
	}{
		{"accepted at once", nil, `"attempts":1`, 0},
		{"server errors", []error{failing, failing}, `"attempts":3`, 0},
		{"a budget's refusals look for a grant once", []error{budgetRefused(), budgetRefused()}, `"attempts":3`, 1},
		{"a refusal after an error looks again", []error{budgetRefused(), failing, budgetRefused()}, `"attempts":4`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newEvictScene(t, nil, tt.script...)
			s.r.evict(s.t)
			if got := s.count("create", "pods", "eviction"); got != len(tt.script)+1 {
				t.Errorf("%d evictions sent, want %d", got, len(tt.script)+1)
			}
			if !strings.Contains(s.logs.buf.String(), tt.wantAttempts) {
				t.Errorf("log does not say %s:\n%s", tt.wantAttempts, s.logs.buf.String())
			}
			if got := s.count("list", "poddisruptionbudgets", ""); got != tt.wantLooks {
				t.Errorf("looked for a budget's grant %d times, want %d", got, tt.wantLooks)
			}
			// Without a deadline the pod's own grace applies: the event says -1.
			want := Event{Time: evictNow, Type: EventEvicted, Node: "n1", Pod: "ns/p", PodUID: "uid-p", GraceSeconds: -1}
			if n := len(s.events); n == 0 || s.events[n-1] != want {
				t.Errorf("events %+v, want the last %+v", s.events, want)
			}
		})
	}
}

// An eviction the API answers with a conflict reads the pod: the same pod
// is retried, with the reason in the log (the read's own error when the
// read fails); another pod of the same name means ours is gone.
func TestConflictedEvictionReadsThePod(t *testing.T) {
	t.Parallel()
	conflict := apierrors.NewConflict(podsGR, "p", errors.New("uid mismatch"))
	tests := []struct {
		name      string
		read      func(int) (bool, runtime.Object, error) // the answer to the nth read after the first eviction
		wantLog   string
		wantSent  int
		wantEvent EventType
	}{
		{"same pod: retried", func(int) (bool, runtime.Object, error) { return false, nil, nil },
			`"error":"Operation cannot be fulfilled on pods \"p\": uid mismatch"`, 2, EventEvicted},
		{"read failing: retried", func(n int) (bool, runtime.Object, error) {
			return n == 1, nil, apierrors.NewInternalError(errors.New("etcd leader changed"))
		}, `"error":"reading pod after a conflict: Internal error occurred: etcd leader changed"`, 2, EventEvicted},
		{"another pod of the name: gone", func(int) (bool, runtime.Object, error) {
			p := pod("p", ownedBy("ReplicaSet", "rs"))
			p.UID = "uid-later"
			return true, &p, nil
		}, `"pod already gone"`, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newEvictScene(t, nil, conflict)
			reads := 0
			s.client.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
				reads++
				return tt.read(reads)
			})
			s.r.evict(s.t)
			if got := s.count("create", "pods", "eviction"); got != tt.wantSent {
				t.Errorf("%d evictions sent, want %d", got, tt.wantSent)
			}
			if !strings.Contains(s.logs.buf.String(), tt.wantLog) {
				t.Errorf("log does not say %s:\n%s", tt.wantLog, s.logs.buf.String())
			}
			var types []EventType
			for _, e := range s.events {
				types = append(types, e.Type)
			}
			var want []EventType
			if tt.wantEvent != "" {
				want = []EventType{tt.wantEvent}
			}
			if diff := cmp.Diff(want, types); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}
