package kevents_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/kevents"
	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

// A drain that a PodDisruptionBudget holds up, run twice as a redelivered
// message would: `kubectl describe` shows the interruption and the block on
// the node and the pods, and the second run adds no event.
func TestEventsShowInDescribe(t *testing.T) {
	sb := sandbox.ForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	env := fixture.New(t, sb.RESTConfig())
	rc := sb.RESTConfig()
	drain.TuneRESTConfig(rc, 0, 0)
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	node := env.Node(ctx, fixture.NodeOptions{})
	env.Deployment(ctx, "web", 2, fixture.PinnedTo(node.Name))
	env.Deployment(ctx, "db", 1, fixture.PinnedTo(node.Name))
	env.WaitDeploymentReady(ctx, "web")
	env.WaitDeploymentReady(ctx, "db")
	env.PDB(ctx, "db", map[string]string{"app": "db"}, fixture.MinAvailable(1))
	db := env.Pods(ctx, "app=db")[0]

	rec := kevents.New(client, kevents.Options{})
	cfg := drain.DefaultConfig()
	cfg.OnEvent = rec.Observe
	d := rec.Wrap(drain.New(client, cfg, nil))
	deadline := time.Now().Add(10 * time.Minute).Truncate(time.Second)
	req := drain.Request{Node: node.Name, Kind: "spot-interruption", EventID: "ev-" + env.Namespace, Deadline: deadline, Evict: true}
	for range 2 {
		// The budget holds the db pod: the run stops at its context's end.
		rctx, rcancel := context.WithTimeout(ctx, 4*time.Second)
		rep, err := d.Run(rctx, req)
		rcancel()
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if len(rep.BlockedByPDB) != 1 {
			t.Fatalf("report %+v: want the db pod blocked", rep)
		}
	}

	nodeEvents := list(ctx, t, client, "Node", node.Name)
	if got := reasons(nodeEvents); got != "DrainBlocked,SpotInterruption" {
		t.Errorf("node event reasons %q, want DrainBlocked,SpotInterruption once each", got)
	}
	dbEvents := list(ctx, t, client, "Pod", db.Name)
	if got := reasons(dbEvents); got != "DrainBlocked" {
		t.Errorf("db pod event reasons %q, want DrainBlocked", got)
	}
	// The events are found the way `kubectl describe node` searches: every
	// namespace, by kind, name and the node's name as UID.
	shown := describeEvents(ctx, t, client, "", "Node", node.Name, node.Name)
	var text strings.Builder
	for _, e := range shown {
		text.WriteString(e.Reason + " " + e.Source.Component + " " + e.Message + "\n")
	}
	for _, want := range []string{"SpotInterruption", "DrainBlocked", deadline.UTC().Format(time.RFC3339), "drainpipe"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("kubectl describe node would not show %q:\n%s", want, text.String())
		}
	}
	var ours []corev1.Event
	for _, e := range describeEvents(ctx, t, client, env.Namespace, "Pod", db.Name, string(db.UID)) {
		if e.Source.Component == kevents.DefaultComponent {
			ours = append(ours, e)
		}
	}
	if got := reasons(ours); got != "DrainBlocked" {
		t.Errorf("kubectl describe pod would show reasons %q, want DrainBlocked", got)
	}
}

// describeEvents lists events as kubectl describe does (its searchEvents).
func describeEvents(ctx context.Context, t *testing.T, c kubernetes.Interface, ns, kind, name, uid string) []corev1.Event {
	t.Helper()
	events := c.CoreV1().Events(ns)
	sel := events.GetFieldSelector(&name, &ns, &kind, &uid)
	l, err := events.List(ctx, metav1.ListOptions{FieldSelector: sel.String()})
	if err != nil {
		t.Fatalf("listing events: %v", err)
	}
	return l.Items
}

func list(ctx context.Context, t *testing.T, c kubernetes.Interface, kind, name string) []corev1.Event {
	t.Helper()
	sel := fields.Set{"involvedObject.kind": kind, "involvedObject.name": name, "source": "drainpipe"}
	l, err := c.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: sel.String()})
	if err != nil {
		t.Fatalf("listing events: %v", err)
	}
	return l.Items
}

// reasons lists event reasons, sorted, comma-separated.
func reasons(evs []corev1.Event) string {
	var rs []string
	for _, e := range evs {
		rs = append(rs, e.Reason)
	}
	slices.Sort(rs)
	return strings.Join(rs, ",")
}
