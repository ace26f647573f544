package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/hold"
	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// `drainpipe nodes` lists a node Drainpipe cordoned with its kind, event,
// deadline and what it holds; `drainpipe uncordon` gives it back exactly
// (the operator's exclusion label value restored), after which it is no
// longer listed; a second uncordon says there is nothing to give back.
func TestNodesAndUncordon(t *testing.T) {
	sb := sandbox.ForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	env := fixture.New(t, sb.RESTConfig())
	node := env.Node(ctx, fixture.NodeOptions{Labels: map[string]string{drain.ExcludeFromLBLabel: "false"}})
	deadline := time.Date(2026, 11, 20, 10, 2, 0, 0, time.UTC)
	d := drain.New(env.Client, drain.DefaultConfig(), nil)
	if _, err := d.Run(ctx, drain.Request{Node: node.Name, Kind: "spot-interruption", EventID: "ev-cli", Deadline: deadline}); err != nil {
		t.Fatal(err)
	}
	kc := sb.KubeconfigPath()

	code, stdout, stderr := runCLI(t, nil, "", "nodes", "--kubeconfig", kc)
	if code != exitOK {
		t.Fatalf("nodes exited %d: %s", code, stderr)
	}
	line := lineOf(stdout, node.Name)
	for _, want := range []string{"spot-interruption", "ev-cli", "2026-11-20T10:02:00Z", "cordon,taint"} {
		if !strings.Contains(line, want) {
			t.Errorf("nodes line %q lacks %q", line, want)
		}
	}

	code, stdout, stderr = runCLI(t, nil, "", "nodes", "--kubeconfig", kc, "--context", "drainpipe-sandbox", "-o", "wide")
	if line := lineOf(stdout, node.Name); code != exitOK || !strings.Contains(line, fixture.InstanceID(node)) ||
		!strings.Contains(line, node.Labels["topology.kubernetes.io/zone"]) {
		t.Errorf("nodes -o wide = %d, line %q (stderr %q); want the instance and zone", code, line, stderr)
	}
	code, stdout, stderr = runCLI(t, nil, "", "nodes", "--kubeconfig", kc, "-o", "json")
	var listed []heldNode
	if err := json.Unmarshal([]byte(stdout), &listed); code != exitOK || err != nil {
		t.Fatalf("nodes -o json = %d, %v: %q %q", code, err, stdout, stderr)
	}
	i := slices.IndexFunc(listed, func(h heldNode) bool { return h.Node == node.Name })
	if i < 0 || listed[i].Kind != "spot-interruption" || listed[i].EventID != "ev-cli" || !slices.Equal(listed[i].Held, []string{"cordon", "taint"}) {
		t.Errorf("nodes -o json: %s, want %s held for ev-cli with cordon and taint", stdout, node.Name)
	}

	code, stdout, stderr = runCLI(t, nil, "", "uncordon", node.Name, "--kubeconfig", kc)
	if code != exitOK || !strings.Contains(stdout, "given back") {
		t.Fatalf("uncordon = %d, %q, %q", code, stdout, stderr)
	}
	got, err := env.Client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Unschedulable || got.Labels[drain.ExcludeFromLBLabel] != "false" || drain.ReadMarks(got).Held() {
		t.Errorf("after uncordon: unschedulable %v, label %q, marks %+v", got.Spec.Unschedulable,
			got.Labels[drain.ExcludeFromLBLabel], drain.ReadMarks(got))
	}
	_, stdout, _ = runCLI(t, nil, "", "nodes", "--kubeconfig", kc)
	if l := lineOf(stdout, node.Name); l != "" {
		t.Errorf("node still listed after uncordon: %q", l)
	}
	code, stdout, _ = runCLI(t, nil, "", "uncordon", "--kubeconfig", kc, node.Name)
	if code != exitOK || !strings.Contains(stdout, "no Drainpipe marks") {
		t.Errorf("second uncordon = %d, %q; want nothing to give back", code, stdout)
	}
}

// uncordon takes several nodes, --all or -l; --dry-run answers the same
// and writes nothing; a missing node fails (exit 1) without stopping the
// others.
func TestUncordonMany(t *testing.T) {
	sb := sandbox.ForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	env := fixture.New(t, sb.RESTConfig())
	d := drain.New(env.Client, drain.DefaultConfig(), nil)
	pool := map[string]string{}
	var names []string
	for i, p := range []string{"a", "a", "b"} {
		n := env.Node(ctx, fixture.NodeOptions{Labels: map[string]string{"pool": p}})
		if _, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "spot-interruption", EventID: fmt.Sprint("ev-", i)}); err != nil {
			t.Fatal(err)
		}
		pool[n.Name] = p
		names = append(names, n.Name)
	}
	free := env.Node(ctx, fixture.NodeOptions{Labels: map[string]string{"pool": "a"}})
	kc := sb.KubeconfigPath()
	heldNow := func() []string {
		var h []string
		for _, n := range append(names, free.Name) {
			if got, err := env.Client.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{}); err == nil && drain.ReadMarks(got).Held() {
				h = append(h, n)
			}
		}
		return h
	}

	code, stdout, stderr := runCLI(t, nil, "", "uncordon", "--kubeconfig", kc, "--all", "--dry-run")
	for _, n := range names {
		if !strings.Contains(stdout, "dry run: node "+n+" would be given back") {
			t.Errorf("--all --dry-run: no line for %s in %q", n, stdout)
		}
	}
	if code != exitOK || strings.Contains(stdout, free.Name) || len(heldNow()) != 3 {
		t.Errorf("--all --dry-run = %d (%q): held now %v, want 0, the free node not named, all 3 still held", code, stderr, heldNow())
	}

	code, stdout, _ = runCLI(t, nil, "", "uncordon", "--kubeconfig", kc, "-l", "pool=b", "--yes")
	if code != exitOK || !strings.Contains(stdout, names[2]+" given back") || !slices.Equal(heldNow(), names[:2]) {
		t.Errorf("-l pool=b = %d %q; held now %v, want %v", code, stdout, heldNow(), names[:2])
	}

	code, stdout, stderr = runCLI(t, nil, "", "uncordon", "--kubeconfig", kc, names[0], "no-such-node", names[1])
	if code != exitFail || !strings.Contains(stderr, "no-such-node") || len(heldNow()) != 0 {
		t.Errorf("two nodes and a missing one = %d, %q %q; held now %v; want 1, the missing one named, both given back",
			code, stdout, stderr, heldNow())
	}
}

func TestNodesUsage(t *testing.T) {
	kc := writeKubeconfig(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing kubeconfig", []string{"uncordon", "--kubeconfig", "/nonexistent/kubeconfig", "n1"}, "loading kubeconfig"},
		{"no node", []string{"uncordon", "--kubeconfig", kc}, "exactly one of them"},
		{"nodes and --all", []string{"uncordon", "--kubeconfig", kc, "--all", "n1"}, "exactly one of them"},
		{"bad selector", []string{"uncordon", "--kubeconfig", kc, "-l", "a in (b"}, "-l"},
		// kubectl refuses an unknown context; the current one would be
		// the wrong cluster.
		{"unknown context: uncordon", []string{"uncordon", "--kubeconfig", kc, "--context", "typo", "n1"}, `context "typo" not found`},
		{"unknown context: nodes", []string{"nodes", "--kubeconfig", kc, "--context", "typo"}, `context "typo" not found`},
		{"bad output", []string{"nodes", "--kubeconfig", kc, "-o", "yaml"}, "want wide or json"},
		{"extra argument", []string{"nodes", "--kubeconfig", kc, "n1", "n2"}, "unexpected argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, nil, "", tc.args...)
			if code != exitUsage || stdout != "" || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and %q", code, stdout, stderr, exitUsage, tc.want)
			}
		})
	}
}

// writeKubeconfig writes a kubeconfig whose one context, "real", points
// at nothing: enough to check arguments before any call.
func writeKubeconfig(t *testing.T) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["real"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	cfg.AuthInfos["real"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["real"] = &clientcmdapi.Context{Cluster: "real", AuthInfo: "real"}
	cfg.CurrentContext = "real"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// lineOf returns the line of out that starts with name, or "".
func lineOf(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, name+" ") {
			return l
		}
	}
	return ""
}

// `drainpipe nodes -o wide` names every hold of a node, not only the
// newest.
func TestNodesWideShowsEveryHold(t *testing.T) {
	var out strings.Builder
	m := drain.Marks{Node: "n1", Kind: "asg-lifecycle", Holds: hold.Set{{Kind: "scheduled-change", ID: "arn"}, {Kind: "asg-lifecycle", ID: "tok"}}}
	if err := printNodes(&out, []heldNode{{Marks: m, Held: []string{"cordon"}}}, "wide"); err != nil {
		t.Fatal(err)
	}
	if line := lineOf(out.String(), "n1"); !strings.Contains(line, "scheduled-change/arn,asg-lifecycle/tok") {
		t.Errorf("wide line %q does not name both holds", line)
	}
}
