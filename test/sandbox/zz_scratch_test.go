package sandbox_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

func TestScratchMany(t *testing.T) {
	sb := sandbox.ForTest(t)
	ctx := t.Context()
	env := fixture.New(t, sb.RESTConfig())
	nodes := env.Nodes(ctx, 10, fixture.NodeOptions{})
	start := time.Now()
	env.Deployment(ctx, "one", 110, fixture.OnNode(nodes[0].Name))
	t.Logf("110 on one node ready in %v; on node: %d", time.Since(start), len(env.PodsOnNode(ctx, nodes[0].Name)))
	start = time.Now()
	for i := 1; i < 10; i++ {
		env.Deployment(ctx, fmt.Sprintf("d%d", i), 100, fixture.OnNode(nodes[i].Name))
	}
	t.Logf("9x100 ready in %v", time.Since(start))
}
