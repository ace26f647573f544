package drain_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// loggedScene is a scene whose drainer's requests are recorded.
func loggedScene(t *testing.T, cfg drain.Config) (*scene, *drain.Drainer, *fixture.RequestLog) {
	t.Helper()
	s, d := newScene(t, cfg)
	l := &fixture.RequestLog{}
	via := l.Via
	s.via.Store(&via)
	return s, d, l
}

// marks is what a cordon leaves on a node, first-seen's time aside.
func marks(n *corev1.Node) map[string]any {
	own := map[string]string{}
	for k, v := range n.Annotations {
		if strings.HasPrefix(k, "drainpipe.dev/") && k != drain.AnnotationFirstSeen {
			own[k] = v
		}
	}
	return map[string]any{"unschedulable": n.Spec.Unschedulable, "taints": n.Spec.Taints, "labels": n.Labels,
		"annotations": own, "first-seen": n.Annotations[drain.AnnotationFirstSeen] != ""}
}

// A node never touched is cordoned unread in one request, into exactly
// the state the read path leaves an identical node in; Run then sends
// nothing more for the cordon.
func TestCordonUntouchedMatchesTheReadPath(t *testing.T) {
	s, d, l := loggedScene(t, drain.DefaultConfig())
	env := s.env
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	nodes := env.Nodes(ctx, 2, fixture.NodeOptions{})
	deadline := time.Now().Add(2 * time.Minute).Truncate(time.Second)
	req := drain.Request{Kind: "spot-interruption", EventID: "ev-1", Deadline: deadline, EventTime: time.Now()}

	read := req
	read.Node = nodes[0].Name
	if _, err := d.Run(ctx, read); err != nil {
		t.Fatalf("Run: %v", err)
	}
	unread := req
	unread.Node = nodes[1].Name
	l.Take()
	got, err := d.CordonUntouched(ctx, unread, drain.Untouched{ProviderID: nodes[1].Spec.ProviderID}, nil)
	if err != nil {
		t.Fatalf("CordonUntouched: %v", err)
	}
	if diff := cmp.Diff([]string{"PATCH /api/v1/nodes/" + unread.Node}, l.Take()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	unread.Read, unread.Cordoned = got, true
	if _, err := d.Run(ctx, unread); err != nil {
		t.Fatalf("Run after CordonUntouched: %v", err)
	}
	if sent := l.Take(); len(sent) != 0 {
		t.Errorf("Run after CordonUntouched sent %q, want nothing", sent)
	}
	want, err := env.Client.CoreV1().Nodes().Get(ctx, nodes[0].Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after, err := env.Client.CoreV1().Nodes().Get(ctx, nodes[1].Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantMarks, gotMarks := marks(want), marks(after)
	// The nodes' own labels differ (hostname): compare Drainpipe's.
	for _, m := range []map[string]any{wantMarks, gotMarks} {
		m["labels"] = maps.Collect(func(yield func(string, string) bool) {
			for k, v := range m["labels"].(map[string]string) {
				if (strings.HasPrefix(k, "drainpipe.dev/") || k == drain.ExcludeFromLBLabel) && !yield(k, v) {
					return
				}
			}
		})
	}
	if diff := cmp.Diff(wantMarks, gotMarks); diff != "" {
		t.Errorf("node cordoned unread differs from one cordoned after a read (-read +unread):\n%s", diff)
	}
}

// A node not as expected is left as it is, and the caller told so
// (ErrTouched): another instance's node, one cordoned, tainted or marked
// by anyone, one with a label the caller leaves to others, or none.
func TestCordonUntouchedLeavesOtherNodes(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	env := s.env
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	taint := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	cases := map[string]struct {
		opts   fixture.NodeOptions
		absent []string
		other  bool // expect another instance's providerID
	}{
		"another instance":    {other: true},
		"cordoned by anyone":  {opts: fixture.NodeOptions{Unschedulable: true}},
		"tainted":             {opts: fixture.NodeOptions{Taints: []corev1.Taint{taint}}},
		"held label":          {opts: fixture.NodeOptions{Labels: map[string]string{drain.LabelHeld: "true"}}},
		"drainpipe annotated": {opts: fixture.NodeOptions{Annotations: map[string]string{drain.AnnotationReport: "{}"}}},
		"excluded from LB":    {opts: fixture.NodeOptions{Labels: map[string]string{drain.ExcludeFromLBLabel: "true"}}},
		"left to others":      {opts: fixture.NodeOptions{Labels: map[string]string{"karpenter.sh/nodepool": "default"}}, absent: []string{"karpenter.sh/nodepool"}},
	}
	for name, c := range cases {
		n := env.Node(ctx, c.opts)
		u := drain.Untouched{ProviderID: n.Spec.ProviderID, Absent: c.absent}
		if c.other {
			u.ProviderID = fixture.ProviderID("us-west-2a", "i-0ffffffffffffffff")
		}
		_, err := d.CordonUntouched(ctx, drain.Request{Node: n.Name, Kind: "spot-interruption"}, u, nil)
		if !errors.Is(err, drain.ErrTouched) {
			t.Errorf("%s: CordonUntouched = %v, want ErrTouched", name, err)
		}
		after, gerr := env.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if gerr != nil {
			t.Fatal(gerr)
		}
		if after.ResourceVersion != n.ResourceVersion {
			t.Errorf("%s: node changed (resourceVersion %s -> %s)", name, n.ResourceVersion, after.ResourceVersion)
		}
	}
	_, err := d.CordonUntouched(ctx, drain.Request{Node: "ip-10-9-9-9.us-west-2.compute.internal", Kind: "spot-interruption"},
		drain.Untouched{ProviderID: fixture.ProviderID("us-west-2a", "i-0eeeeeeeeeeeeeeee")}, nil)
	if !errors.Is(err, drain.ErrTouched) {
		t.Errorf("missing node: CordonUntouched = %v, want ErrTouched", err)
	}
}
