package group_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/drainpipe/drainpipe/internal/group"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// When the slot Leases cannot be written, Enter fails at once: the drain
// goes on without the limit (docs/drain-features.md#group-aware-drains).
// It never waits for a slot nobody holds, nor calls onWait (the cordon of
// a waiting node).
func TestLeasesUnavailableFailOpen(t *testing.T) {
	t.Run("namespace absent", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
		defer cancel()
		s := newScene(t, ctx, 1)
		l := group.New(group.Config{Max: group.Limit{N: 1}, Namespace: "absent-" + s.env.Namespace}, nil)
		enterFailsOpen(ctx, t, l, s.env.Client, s.nodes[0].Name, s.asg)
	})
	t.Run("role missing", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
		defer cancel()
		s := newScene(t, ctx, 1)
		sb := sandbox.ForTest(t)
		s.env.ApplyRBAC(ctx, withoutRole(t, s.env.Namespace), "drainpipe")
		rc := rest.CopyConfig(sb.RESTConfig())
		rc.Impersonate = rest.ImpersonationConfig{UserName: "drainpipe-function", Groups: []string{"drainpipe"}}
		client, err := kubernetes.NewForConfig(rc)
		if err != nil {
			t.Fatal(err)
		}
		l := group.New(group.Config{Max: group.Limit{N: 1}, Namespace: s.env.Namespace}, nil)
		enterFailsOpen(ctx, t, l, client, s.nodes[0].Name, s.asg)
	})
}

func enterFailsOpen(ctx context.Context, t *testing.T, l *group.Limiter, client kubernetes.Interface, node, asg string) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	waited := false
	slot, err := l.Enter(ctx, client, group.Who{Node: node, ASG: asg}, func(group.Busy) { waited = true; cancel() })
	var busy *group.Busy
	switch {
	case errors.As(err, &busy):
		t.Fatalf("Enter waited: %v; want an error, the limit unavailable", err)
	case err == nil:
		t.Fatalf("Enter took slot %s; want an error, the limit unavailable", slot.Name())
	case waited:
		t.Errorf("onWait called: the node would have been cordoned to wait")
	}
	t.Logf("Enter: %v", err)
}

// withoutRole is deploy/rbac.yaml with its Role and Namespace left out,
// its RoleBinding in ns: the Leases there are not Drainpipe's to touch.
func withoutRole(t *testing.T, ns string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, doc := range strings.Split(string(data), "\n---\n") {
		if strings.Contains(doc, "\nkind: Role\n") || strings.Contains(doc, "\nkind: Namespace\n") {
			continue
		}
		keep = append(keep, strings.ReplaceAll(doc, "namespace: drainpipe", "namespace: "+ns))
	}
	path := filepath.Join(t.TempDir(), "rbac.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(keep, "\n---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
