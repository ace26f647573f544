package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// earlierRelease is a fixture of test/events/earlier/: the nodes and
// in-flight messages a release left behind when it was replaced.
type earlierRelease struct {
	Release   string            `json:"release"`
	WrittenAt time.Time         `json:"writtenAt"`
	Cases     []json.RawMessage `json:"cases"`
}

// earlierCase is one node and its message, times already moved to now.
type earlierCase struct {
	Name       string `json:"name"`
	AgeSeconds int    `json:"ageSeconds"`
	Pods       int32  `json:"pods"`
	Want       string `json:"want"` // finished, given back, held
	Hook       *struct {
		Group, Name, Token string
	} `json:"hook"`
	Node struct {
		Unschedulable bool              `json:"unschedulable"`
		Taints        []corev1.Taint    `json:"taints"`
		Labels        map[string]string `json:"labels"`
		Annotations   map[string]string `json:"annotations"`
	} `json:"node"`
	Message struct {
		ReceiveCount int             `json:"receiveCount"`
		Body         json.RawMessage `json:"body"`
	} `json:"message"`
}

// loadEarlier reads a release's fixture and makes each case's marks and
// message as if written ageSeconds before now, for instance id.
func loadEarlier(t *testing.T, release string) (earlierRelease, func(raw json.RawMessage, id string) earlierCase) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "events", "earlier", release+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var rel earlierRelease
	if err := json.Unmarshal(b, &rel); err != nil {
		t.Fatalf("%s: %v", release, err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	return rel, func(raw json.RawMessage, id string) earlierCase {
		var age struct {
			AgeSeconds int `json:"ageSeconds"`
		}
		if err := json.Unmarshal(raw, &age); err != nil {
			t.Fatal(err)
		}
		shift := now.Add(-time.Duration(age.AgeSeconds) * time.Second).Sub(rel.WrittenAt)
		var v any
		if err := json.Unmarshal(bytes.ReplaceAll(raw, []byte("{instance}"), []byte(id)), &v); err != nil {
			t.Fatal(err)
		}
		moved, err := json.Marshal(shiftTimes(v, shift))
		if err != nil {
			t.Fatal(err)
		}
		var c earlierCase
		if err := json.Unmarshal(moved, &c); err != nil {
			t.Fatalf("case: %v", err)
		}
		return c
	}
}

// shiftTimes moves every RFC 3339 timestamp in v by d, keeping its form.
func shiftTimes(v any, d time.Duration) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = shiftTimes(e, d)
		}
	case []any:
		for i, e := range v {
			v[i] = shiftTimes(e, d)
		}
	case string:
		if at, err := time.Parse(time.RFC3339, v); err == nil {
			return at.Add(d).UTC().Format(time.RFC3339)
		}
	}
	return v
}

// markAsEarlier puts c's marks on the node, as the earlier release wrote them.
func (l *live) markAsEarlier(t *testing.T, name string, c earlierCase) {
	t.Helper()
	ctx := testContext(t)
	n := l.getNode(ctx, t, name)
	n.Spec.Unschedulable = c.Node.Unschedulable
	n.Spec.Taints = append(n.Spec.Taints, c.Node.Taints...)
	for k, v := range c.Node.Labels {
		n.Labels[k] = v
	}
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	for k, v := range c.Node.Annotations {
		n.Annotations[k] = v
	}
	// As the earlier release wrote them: its User-Agent, drainpipe/VERSION,
	// named its writes' field manager.
	if _, err := l.k8s.Client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{FieldManager: drain.FieldManager}); err != nil {
		t.Fatalf("marking %s as %s left it: %v", name, c.Name, err)
	}
}

// TestUpgradeFinishesOrGivesBackEarlierHolds: the nodes and in-flight
// messages Drainpipe 0.1.0 left at a deploy (test/events/earlier/0.1.0.json)
// are finished or given back by the current release, as docs/upgrading.md
// says: a drain cut short resumes and its hook is completed, a rebalance
// hold is kept until its end and then given back, a stopped instance's
// node comes back when the instance runs. Every node still held carries
// drainpipe.dev/held afterwards, so the sweep sees it from then on.
func TestUpgradeFinishesOrGivesBackEarlierHolds(t *testing.T) {
	ctx := testContext(t)
	l := newLive(t)
	rel, load := loadEarlier(t, "0.1.0")
	type scene struct {
		c    earlierCase
		node string
	}
	var scenes []scene
	var msgs []message
	for _, raw := range rel.Cases {
		n := l.node(ctx, served)
		c := load(raw, fixture.InstanceID(n))
		if c.Pods > 0 {
			l.k8s.Deployment(ctx, "app-"+c.Name, c.Pods, fixture.PinnedTo(n.Name))
		}
		if c.Hook != nil {
			l.inGroup(n, c.Hook.Group)
			l.aws.AddLifecycleAction(awsfake.LifecycleAction{ASG: c.Hook.Group, Hook: c.Hook.Name, Token: c.Hook.Token,
				InstanceID: fixture.InstanceID(n)})
		}
		l.markAsEarlier(t, n.Name, c)
		scenes = append(scenes, scene{c, n.Name})
		msgs = append(msgs, message{id: c.Name, body: c.Message.Body, receiveCount: c.Message.ReceiveCount})
	}
	// docs/upgrading.md finds the nodes 0.1.0 holds without the sweep's
	// label by this selector.
	unlabelled, err := l.k8s.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "!drainpipe.dev/held"})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, n := range unlabelled.Items {
		found[n.Name] = n.Annotations["drainpipe.dev/kind"] != ""
	}
	for _, s := range scenes {
		if !found[s.node] {
			t.Errorf("%s: node %s not listed by the upgrade guide's selector", s.c.Name, s.node)
		}
	}
	// As the stack configures the function, the groups and hooks included.
	l.start(t, "DRAINPIPE_ASG_NAMES=e2e-asg", "DRAINPIPE_LIFECYCLE_HOOK_NAMES=drainpipe,drainpipe-launch",
		"DRAINPIPE_REBALANCE_HOLD=30m")

	l.invoke(ctx, t, time.Minute, msgs...)

	logs := recordLogs(l.rt)
	for _, s := range scenes {
		t.Run(s.c.Name, func(t *testing.T) {
			got := logs[s.c.Name]
			n := l.getNode(ctx, t, s.node)
			switch s.c.Want {
			case "finished", "held":
				// Finished: drained and done. Held: kept, and asked back
				// when the hold ends. Either way still held, and labelled
				// so the sweep sees the node from now on.
				if want := map[string]string{"finished": "done", "held": "retry"}[s.c.Want]; got.Outcome != want ||
					(s.c.Want == "held" && !strings.Contains(got.Reason, "holding the rebalance cordon until")) {
					t.Errorf("record %+v, want %s", got, want)
				}
				l.checkNode(ctx, t, s.node, true, 0)
				if n.Labels["drainpipe.dev/held"] != "true" {
					t.Errorf("labels %v: the sweep cannot see the node without drainpipe.dev/held", n.Labels)
				}
			case "given back":
				if got.Outcome != "done" || !strings.Contains(got.Reason, "gave node") {
					t.Errorf("record %+v, want done, node given back", got)
				}
				if n.Spec.Unschedulable || len(drainpipeTrace(n)) > 0 {
					t.Errorf("node unschedulable %v, Drainpipe marks %v: not given back", n.Spec.Unschedulable, drainpipeTrace(n))
				}
				if v, ok := n.Labels[excludeLabel]; ok {
					t.Errorf("exclusion label %q left: 0.1.0's restore record says Drainpipe set it", v)
				}
			default:
				t.Fatalf("fixture wants %q", s.c.Want)
			}
			if s.c.Hook != nil {
				var done []string
				for _, c := range l.aws.Completed() {
					done = append(done, fmt.Sprintf("%s/%s %s", c.Token, c.InstanceID, c.Result))
				}
				want := fmt.Sprintf("%s/%s CONTINUE", s.c.Hook.Token, fixture.InstanceID(n))
				if !strings.Contains(strings.Join(done, ","), want) {
					t.Errorf("completed actions %v, want %s", done, want)
				}
			}
		})
	}
}
