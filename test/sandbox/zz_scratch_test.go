package sandbox_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

func TestScratchMany(t *testing.T) {
	sb := sandbox.ForTest(t)
	var ns string
	t.Run("fill", func(t *testing.T) {
		ctx := t.Context()
		start := time.Now()
		t.Cleanup(func() { t.Logf("cleanup done at %v", time.Since(start)) })
		env := fixture.New(t, sb.RESTConfig())
		ns = env.Namespace
		nodes := env.Nodes(ctx, 10, fixture.NodeOptions{})
		for i := 0; i < 10; i++ {
			env.Deployment(ctx, fmt.Sprintf("d%d", i), 100, fixture.OnNode(nodes[i].Name), fixture.GracePeriod(int64(i*10)))
		}
		env.Pod(ctx, "slow", fixture.GracePeriod(3600), fixture.Finalizers("x/y"))
		env.DaemonSet(ctx, "ds", fixture.GracePeriod(600))
		t.Logf("pods at %v", time.Since(start))
	})
	c, _ := kubernetes.NewForConfig(sb.RESTConfig())
	start := time.Now()
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 120*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return err != nil, nil
	})
	t.Logf("namespace gone after %v (err %v)", time.Since(start), err)
}
