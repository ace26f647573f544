package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// heldNodes is how many nodes the cost is measured for (the README's
// "per 100 held nodes").
const heldNodes = 100

// sweepCost is what one sweep asked of the API server and of EC2.
type sweepCost struct {
	API map[string]int // by requestKind
	EC2 map[string]int // by action, each distinct request once
	// Repeats counts EC2 requests identical to an earlier one of the
	// sweep: the SDK's retries, reported apart. Now and then a large
	// answer's read ends in "use of closed network connection" (a race in
	// net/http's idle-connection handling, aws/aws-sdk-go-v2#2737, which
	// the SDK retries since #2949): the SDK's, not the sweep's design.
	Repeats int
}

func (c sweepCost) String() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(c.API)) {
		fmt.Fprintf(&b, "%s=%d ", k, c.API[k])
	}
	for _, k := range slices.Sorted(maps.Keys(c.EC2)) {
		fmt.Fprintf(&b, "%s=%d ", k, c.EC2[k])
	}
	if c.Repeats > 0 {
		fmt.Fprintf(&b, "(and %d SDK retries) ", c.Repeats)
	}
	return strings.TrimSpace(b.String())
}

// measuredSweep sends one sweep and returns what it cost: the function's
// requests through api and its EC2 calls on the fake.
func (l *live) measuredSweep(ctx context.Context, t *testing.T, api *apiCounter, id string) (sweepCost, []repairLog) {
	t.Helper()
	api.take()
	before := len(l.aws.Calls())
	_, reps := l.sweep(ctx, t, id)
	cost := sweepCost{API: api.take(), EC2: map[string]int{}}
	seen := map[string]bool{}
	for _, c := range l.aws.Calls()[before:] {
		switch key := c.Params.Encode(); {
		case c.Service != awsfake.ServiceEC2:
		case seen[key]:
			cost.Repeats++
		default:
			seen[key] = true
			cost.EC2[c.Action]++
		}
	}
	return cost, reps
}

// The cost of a sweep, measured through the real bootstrap: the API
// server's requests counted on the wire, EC2's in the fake's log. A
// cluster where Drainpipe holds nothing costs one LIST of held nodes and
// the two account-wide EC2 calls that find what no notice announced; 100
// held nodes add one batched DescribeInstances, and one PATCH per node
// given back.
func TestSweepCost(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	l := newLive(t)
	api := newAPICounter(t, sandbox.ForTest(t).RESTConfig())
	l.start(t, slices.Concat(sweepEnv, []string{"DRAINPIPE_KUBECONFIG=" + api.kubeconfig(t), "DRAINPIPE_LOG_LEVEL=info"})...)
	nodes := l.nodes(ctx, heldNodes, served)

	idle, _ := l.measuredSweep(ctx, t, api, "sweep-idle")

	for _, n := range nodes {
		l.setState(t, n, "stopped")
	}
	for i := 0; i < len(nodes); i += 10 {
		var msgs []message
		for _, n := range nodes[i:min(i+10, len(nodes))] {
			msgs = append(msgs, message{id: "stopped-" + n.Name, body: stateChange(t, fixture.InstanceID(n), "stopped")})
		}
		if res := l.invoke(ctx, t, time.Minute, msgs...); len(failedIDs(batchResponse(t, res.Body))) > 0 {
			t.Fatalf("stopped notices failed: %s", res.Body)
		}
	}
	held, reps := l.measuredSweep(ctx, t, api, "sweep-held")
	if len(reps) > 0 {
		t.Errorf("sweep of %d stopped, held nodes repaired %d, want none", heldNodes, len(reps))
	}

	for _, n := range nodes {
		l.setState(t, n, "running") // and every running notice lost
	}
	back, reps := l.measuredSweep(ctx, t, api, "sweep-back")
	if len(reps) != heldNodes {
		t.Errorf("sweep after %d lost running notices gave back %d nodes, want all", heldNodes, len(reps))
	}
	after, _ := l.measuredSweep(ctx, t, api, "sweep-after")
	for _, n := range nodes[:3] {
		l.checkGivenBack(ctx, t, n.Name)
	}

	t.Logf("per sweep, %d nodes: idle: %v", heldNodes, idle)
	t.Logf("%d held, nothing due: %v", heldNodes, held)
	t.Logf("%d held, all given back: %v", heldNodes, back)
	t.Logf("idle again: %v", after)
	discovery := map[string]int{"DescribeInstanceStatus": 1, "DescribeInstances": 1}
	for _, c := range []struct {
		name     string
		got      sweepCost
		api, ec2 map[string]int
	}{
		{"idle", idle, map[string]int{"LIST nodes": 1}, discovery},
		{"held, nothing due", held, map[string]int{"LIST nodes": 1}, map[string]int{"DescribeInstanceStatus": 1, "DescribeInstances": 2}},
		{"all given back", back, map[string]int{"LIST nodes": 1, "PATCH nodes": heldNodes},
			map[string]int{"DescribeInstanceStatus": 1, "DescribeInstances": 2}},
		{"idle again", after, map[string]int{"LIST nodes": 1}, discovery},
	} {
		if diff := cmp.Diff(c.api, c.got.API); diff != "" {
			t.Errorf("%s: API server requests (-want +got):\n%s", c.name, diff)
		}
		if diff := cmp.Diff(c.ec2, c.got.EC2); diff != "" {
			t.Errorf("%s: EC2 calls (-want +got):\n%s", c.name, diff)
		}
	}
}
