package chaos

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/fleet"
)

// completion is one successful CompleteLifecycleAction and the state of
// its node at that moment, before Drainpipe got the answer.
type completion struct {
	Node      string
	Evictable int  // pods a drain still had to move
	Live      bool // counted from the API server (else from the watch: it was down)
	// LastDelivery: a record naming the instance was on its last
	// delivery, the one case a hook may be completed undrained.
	LastDelivery bool
}

// checker records every completion as it happens.
type checker struct {
	r      *Rig
	byID   map[string]fleet.Node
	mu     sync.Mutex
	seen   []completion
	maxRec int
}

func watchCompletions(r *Rig) *checker {
	c := &checker{r: r, byID: map[string]fleet.Node{}, maxRec: r.Deployment.MaxReceiveCount}
	for _, n := range r.Fleet.Nodes {
		c.byID[n.InstanceID] = n
	}
	r.Fake.OnComplete(c.completed)
	return c
}

// completed runs inside the fake's answer to a successful completion.
func (c *checker) completed(done awsfake.Completion) {
	n := c.byID[done.InstanceID]
	got := completion{Node: n.Name}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if k, err := c.liveEvictable(ctx, n.Name); err == nil {
		got.Evictable, got.Live = k, true
	} else { // the API server is down or paused: the watch's last view
		got.Evictable = c.r.Observer.EvictableOn(n.Name)
	}
	got.LastDelivery = c.lastDelivery(done.InstanceID)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = append(c.seen, got)
}

func (c *checker) liveEvictable(ctx context.Context, node string) (int, error) {
	pods, err := c.r.Admin.CoreV1().Pods(c.r.Fleet.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return 0, err
	}
	k := 0
	for i := range pods.Items {
		if fleet.Evictable(&pods.Items[i]) {
			k++
		}
	}
	return k, nil
}

// lastDelivery reports whether a message naming the instance is in flight
// on its last delivery.
func (c *checker) lastDelivery(instanceID string) bool {
	msgs, err := c.r.Fake.QueueMessages(c.r.Deployment.Queue)
	if err != nil {
		return false
	}
	for _, m := range msgs {
		if m.InFlight && len(m.Receives) >= c.maxRec && strings.Contains(m.Body, instanceID) {
			return true
		}
	}
	return false
}

// early lists the completions made while their node had evictable pods,
// not on a last delivery; allowed lists those made on a last delivery.
func (c *checker) early() (early, allowed []completion) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.seen {
		switch {
		case s.Evictable == 0:
		case s.LastDelivery:
			allowed = append(allowed, s)
		default:
			early = append(early, s)
		}
	}
	return early, allowed
}

// SpotWindow is a Spot warning's notice: a Spot node must be drained
// within it.
const SpotWindow = 2 * time.Minute

// result reads the invariants after the wave.
func (r *Rig) result(name string, sent int, elapsed time.Duration) Result {
	res := Result{Scenario: name, Elapsed: elapsed}
	msgs, err := r.Fake.QueueMessages(r.Deployment.Queue)
	if err != nil {
		res.Problems = append(res.Problems, "reading the queue: "+err.Error())
	}
	res.Messages = len(msgs)
	for _, m := range msgs {
		res.Receives += len(m.Receives)
		res.Redeliveries += max(0, len(m.Receives)-1)
		switch {
		case m.DeadLettered:
			res.DLQ++
		case m.DeletedAt.IsZero():
			res.Lost++
		}
	}
	if res.Messages < sent {
		res.Problems = append(res.Problems, fmt.Sprintf("%d messages sent, the queue knows %d", sent, res.Messages))
	}
	hooks := r.Fleet.HookState(r.Fake)
	res.Completed, res.Double, res.Open = hooks.Completed, hooks.Double, hooks.Open
	early, allowed := r.checker.early()
	res.Early, res.LastDelivery = len(early), len(allowed)
	for _, e := range early {
		res.Problems = append(res.Problems, fmt.Sprintf("hook of %s completed with %d evictable pods on it (live %t)", e.Node, e.Evictable, e.Live))
	}
	r.checkNodes(&res)
	r.checkLoud(&res, allowed)
	if res.Lost > 0 {
		res.Problems = append(res.Problems, fmt.Sprintf("%d messages neither deleted nor dead-lettered", res.Lost))
	}
	if res.Double > 0 || res.Open > 0 {
		res.Problems = append(res.Problems, fmt.Sprintf("hooks completed twice %d, left open %d", res.Double, res.Open))
	}
	return res
}

// checkNodes counts the drainable targets drained, and those drained
// after their Spot notice ran out.
func (r *Rig) checkNodes(res *Result) {
	times := r.Observer.Times()
	for _, n := range r.Fleet.Targets() {
		if n.Hook != nil {
			res.Hooks++
		}
		if n.Blocked {
			continue
		}
		res.Drainable++
		t := times[n.Name]
		switch {
		case t.Drained == 0:
			res.Problems = append(res.Problems, fmt.Sprintf("node %s never drained (cordoned after %v; %s)", n.Name, t.Cordoned, r.podsOn(n.Name)))
		case n.Spot && t.Drained > SpotWindow:
			res.Late++
			res.Drained++
			res.Problems = append(res.Problems, fmt.Sprintf("spot node %s drained after %v, past its notice", n.Name, t.Drained))
		default:
			res.Drained++
		}
	}
}

// checkLoud wants every hook completed undrained on its last delivery to
// have been logged as an error naming its node.
func (r *Rig) checkLoud(res *Result, allowed []completion) {
	if len(allowed) == 0 {
		return
	}
	logs := r.Deployment.Mapping.Logs()
	for _, a := range allowed {
		loud := false
		for _, l := range logs {
			if strings.Contains(l, "completing lifecycle hook before drain finished") && strings.Contains(l, a.Node) {
				loud = true
				break
			}
		}
		if !loud {
			res.Problems = append(res.Problems, fmt.Sprintf("hook of %s completed undrained on its last delivery without an error logged", a.Node))
		}
	}
}

// podsOn names the evictable pods left on node and the fleet's pods not
// running, for a never-drained node's report.
func (r *Rig) podsOn(node string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pods, err := r.Admin.CoreV1().Pods(r.Fleet.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "pods unknown: " + err.Error()
	}
	var left, waiting []string
	for _, p := range pods.Items {
		switch {
		case p.Spec.NodeName == node && fleet.Evictable(&p):
			left = append(left, p.Name)
		case p.Status.Phase != corev1.PodRunning:
			waiting = append(waiting, p.Name+"="+string(p.Status.Phase))
		}
	}
	return fmt.Sprintf("left on it %v, fleet pods not running %v", left, waiting)
}
