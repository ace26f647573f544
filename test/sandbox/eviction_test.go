package sandbox_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

func evict(ctx context.Context, c kubernetes.Interface, p corev1.Pod) error {
	return c.PolicyV1().Evictions(p.Namespace).Evict(ctx, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
	})
}

// TestEvictionHonoursPDB walks the path a drain takes: with minAvailable 2
// of 3, the first eviction passes, the second is refused with 429 until
// the first pod's replacement is Ready on another node, then passes; the
// DaemonSet's pod on the cordoned node is untouched throughout.
func TestEvictionHonoursPDB(t *testing.T) {
	sb := sandbox.ForTest(t)
	ctx := t.Context()
	env := fixture.New(t, sb.RESTConfig())
	nodes := env.Nodes(ctx, 2, fixture.NodeOptions{})
	draining, spare := nodes[0].Name, nodes[1].Name
	env.DaemonSet(ctx, "agent")
	env.Deployment(ctx, "web", 3, fixture.OnNode(draining))
	env.PDB(ctx, "web", map[string]string{"app": "web"}, fixture.MinAvailable(2))
	web := env.Pods(ctx, "app=web")
	for _, p := range web {
		if p.Spec.NodeName != draining {
			t.Fatalf("pod %s on %s, want every web pod on %s", p.Name, p.Spec.NodeName, draining)
		}
	}
	agentsBefore := env.Pods(ctx, "app=agent")

	// Both nodes cordoned: the first replacement stays Pending, so the
	// second eviction is refused deterministically.
	env.Cordon(ctx, draining, true)
	env.Cordon(ctx, spare, true)
	if err := evict(ctx, env.Client, web[0]); err != nil {
		t.Fatalf("first eviction: %v", err)
	}
	err := evict(ctx, env.Client, web[1])
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("second eviction: got %v, want 429 Too Many Requests", err)
	}

	env.Cordon(ctx, spare, false)
	refused := 0
	err = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		err := evict(ctx, env.Client, web[1])
		if apierrors.IsTooManyRequests(err) {
			refused++
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("evicting after the replacement: %v (refused %d times)", err, refused)
	}
	original := podUIDs(web)
	for _, p := range env.WaitPodsReady(ctx, "app=web", 2) {
		if original[string(p.UID)] {
			continue
		}
		if p.Spec.NodeName != spare {
			t.Errorf("replacement %s on %s, want %s", p.Name, p.Spec.NodeName, spare)
		}
	}

	agentsAfter := env.Pods(ctx, "app=agent")
	if got, want := podUIDs(agentsAfter), podUIDs(agentsBefore); !equalSets(got, want) {
		t.Errorf("daemonset pods changed: got %v, want %v", got, want)
	}
	for _, p := range agentsAfter {
		if !fixture.IsReady(&p) {
			t.Errorf("daemonset pod %s on %s not Ready", p.Name, p.Spec.NodeName)
		}
	}
}

func podUIDs(pods []corev1.Pod) map[string]bool {
	m := map[string]bool{}
	for _, p := range pods {
		m[string(p.UID)] = true
	}
	return m
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
