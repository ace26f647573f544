//go:build earliergen

// This file is not built in this module: test/events/earlier/gen/generate.sh
// copies it into test/e2e of a checkout of a release and runs it there, so
// the release's own bootstrap, against its own sandbox and AWS wire fakes,
// writes the nodes and in-flight messages the fixture holds.

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// earlierWrittenAt is the moment every fixture's times are moved to: the
// release acted then. Fixed, so regenerating changes only what the release
// wrote.
var earlierWrittenAt = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

// earlierSpec is one case: how to bring a node into its state with the
// release, and what the current release must make of it (the upgrade test
// reads ageSeconds, pods, hook and want).
type earlierSpec struct {
	Name       string `json:"name"`
	About      string `json:"about"`
	AgeSeconds int    `json:"ageSeconds"`
	Pods       int32  `json:"pods,omitempty"`
	Want       string `json:"want"`
	Hook       *struct {
		Group string `json:"group"`
		Name  string `json:"name"`
		Token string `json:"token"`
	} `json:"hook,omitempty"`

	event   string // the release's own sample of the notice (internal/event/testdata)
	id      string // the notice's EventBridge id
	blocked bool   // a budget keeps the pods, so the drain is cut short
	state   string // the instance's EC2 state, and the state-change's
	after   string // the state a notice sent after the deploy reports
	afterID string // that notice's EventBridge id
}

func earlierSpecs() []earlierSpec {
	hook := &struct {
		Group string `json:"group"`
		Name  string `json:"name"`
		Token string `json:"token"`
	}{"e2e-asg", "drainpipe", "0d6f3b1e-0000-4000-8000-0000000001a2"}
	return []earlierSpec{
		{Name: "spot-mid-drain", AgeSeconds: 20, Pods: 2, Want: "finished", blocked: true,
			About: "A Spot warning whose drain the release left unfinished (a disruption budget held the pods until its invocation's deadline; a deploy cuts a drain short the same way): the message comes back and the current release finishes the drain.",
			event: "eventbridge-spot-interruption.json", id: "0d6f3b1e-0000-4000-8000-000000000101"},
		{Name: "hook-mid-drain", AgeSeconds: 60, Pods: 2, Want: "finished", blocked: true, Hook: hook,
			About: "A terminate lifecycle action mid-drain (the release's drain held by a budget until its deadline): the message comes back, the current release finishes the drain and completes the action.",
			event: "eventbridge-asg-terminate-lifecycle.json", id: "0d6f3b1e-0000-4000-8000-000000000102"},
		{Name: "rebalance-hold-over", AgeSeconds: 2400, Want: "given back",
			About: "A rebalance cordon the release held for DRAINPIPE_REBALANCE_HOLD (30m) by hiding its message: the message comes back after the hold and the current release gives the node back.",
			event: "eventbridge-rebalance-recommendation.json", id: "0d6f3b1e-0000-4000-8000-000000000103"},
		{Name: "rebalance-still-held", AgeSeconds: 300, Want: "held",
			About: "A rebalance cordon 5 minutes into its hold, its message back early (a retry): the current release keeps the node and asks for the message back when the hold ends.",
			event: "eventbridge-rebalance-recommendation.json", id: "0d6f3b1e-0000-4000-8000-000000000104"},
		{Name: "stopped-then-running", AgeSeconds: 600, Want: "given back", state: "stopped", after: "running", afterID: "0d6f3b1e-0000-4000-8000-000000000106",
			About: "A stopped instance's node, cordoned, drained and tainted out of service by the release (its message done and deleted); the instance runs again after the deploy and its running notice gives the node back, out-of-service taint included.",
			event: "eventbridge-state-change-stopping.json", id: "0d6f3b1e-0000-4000-8000-000000000105"},
	}
}

// earlierNode is what the release wrote on a node: what changed between
// before and after it acted.
type earlierNode struct {
	Unschedulable bool              `json:"unschedulable"`
	Taints        []corev1.Taint    `json:"taints"`
	Labels        map[string]string `json:"labels"`
	Annotations   map[string]string `json:"annotations"`
	// FieldManagers name who wrote what changed (the API server takes a
	// writer's User-Agent up to its first "/" when it names none).
	FieldManagers []string `json:"fieldManagers"`
}

type earlierMessage struct {
	ReceiveCount int `json:"receiveCount"`
	// HiddenForSeconds is the visibility timeout the release last set on
	// the message; absent when it set none.
	HiddenForSeconds int             `json:"hiddenForSeconds,omitempty"`
	AfterDeploy      bool            `json:"afterDeploy,omitempty"`
	Body             json.RawMessage `json:"body"`
}

type earlierCaseOut struct {
	earlierSpec
	// Logged is how the release logged its handling of the notice.
	Logged struct {
		Outcome string `json:"outcome"`
		Reason  string `json:"reason,omitempty"`
	} `json:"releaseLogged"`
	Node    json.RawMessage `json:"node"`    // an earlierNode
	Message json.RawMessage `json:"message"` // an earlierMessage
}

// elapsed is how long something took, in a logged reason: it differs
// from run to run.
var elapsed = regexp.MustCompile(`in [0-9.]+(ms|µs|s)\b`)

// earlierNormalised is v as JSON, instance id written {instance} and every
// time moved by d.
func earlierNormalised(t *testing.T, v any, id string, d time.Duration) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var raw any
	if err := json.Unmarshal(bytes.ReplaceAll(b, []byte(id), []byte("{instance}")), &raw); err != nil {
		t.Fatal(err)
	}
	if b, err = json.Marshal(earlierShift(raw, d)); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWriteEarlierFixture runs every case through the release's bootstrap
// in one batch, as its queue would have delivered them, and writes the
// fixture to $DRAINPIPE_EARLIER_OUT.
func TestWriteEarlierFixture(t *testing.T) {
	out := os.Getenv("DRAINPIPE_EARLIER_OUT")
	if out == "" {
		t.Skip("DRAINPIPE_EARLIER_OUT unset: run through test/events/earlier/gen/generate.sh")
	}
	l := newLive(t) // builds the release's bootstrap, starts its sandbox
	ctx := testContext(t)
	specs := earlierSpecs()
	nodes := make([]*corev1.Node, len(specs))
	msgs := make([]message, len(specs))
	for i, s := range specs {
		n := l.node(ctx, served)
		id := fixture.InstanceID(n)
		inst := awsfake.Instance{ID: id, PrivateDNSName: n.Name, AvailabilityZone: n.Labels[corev1.LabelTopologyZone],
			Lifecycle: "spot", Tags: map[string]string{"eks:cluster-name": served}, State: s.state,
			LaunchTime: time.Now().Add(-time.Hour)}
		if s.Hook != nil {
			inst.Tags["aws:autoscaling:groupName"] = s.Hook.Group
			l.aws.AddLifecycleHook(awsfake.LifecycleHook{ASG: s.Hook.Group, Name: s.Hook.Name, HeartbeatTimeout: time.Hour})
			l.aws.AddLifecycleAction(awsfake.LifecycleAction{ASG: s.Hook.Group, Hook: s.Hook.Name, Token: s.Hook.Token, InstanceID: id})
		}
		l.aws.AddInstances(inst)
		if s.Pods > 0 {
			app := "app-" + s.Name
			l.k8s.Deployment(ctx, app, s.Pods, fixture.PinnedTo(n.Name))
			if s.blocked {
				l.k8s.PDB(ctx, app, map[string]string{"app": app}, fixture.MinAvailable(int(s.Pods)))
			}
		}
		nodes[i] = l.getNode(ctx, t, n.Name)
	}
	// The release's defaults, but for a short invocation: the drains a
	// budget holds stop at its deadline, as one cut short by a deploy.
	l.start(t, "DRAINPIPE_ASG_NAMES=e2e-asg", "DRAINPIPE_REBALANCE_HOLD=30m",
		"DRAINPIPE_DEADLINE_RESERVE=2s", "DRAINPIPE_HOOK_RESERVE=3s")
	at := time.Now().UTC().Truncate(time.Second) // every notice's time
	for i, s := range specs {
		msgs[i] = message{id: s.Name, body: earlierNotice(t, s, fixture.InstanceID(nodes[i]), at, s.state)}
	}
	res := l.invoke(ctx, t, 10*time.Second, msgs...)
	// Lambda's event source deletes every record the batch response does
	// not name; the named ones come back.
	retried := failedIDs(batchResponse(t, res.Body))

	logs := recordLogs(l.rt)
	queued, err := l.aws.QueueMessages(l.queue)
	if err != nil {
		t.Fatal(err)
	}
	shift := earlierWrittenAt.Sub(at)
	var cases []earlierCaseOut
	for i, s := range specs {
		c := earlierCaseOut{earlierSpec: s}
		id := fixture.InstanceID(nodes[i])
		c.Logged.Outcome = logs[s.Name].Outcome
		c.Logged.Reason = elapsed.ReplaceAllString(strings.ReplaceAll(logs[s.Name].Reason, nodes[i].Name, "{node}"), "in {elapsed}")
		c.Logged.Reason = earlierShift(c.Logged.Reason, shift).(string)
		msg := earlierMessage{Body: msgs[i].body}
		if slices.Contains(retried, s.Name) {
			msg = inFlight(l, queued, msgs[i])
		}
		if s.after != "" {
			if msg.ReceiveCount != 0 {
				t.Errorf("%s: the release left its message in flight; the case needs it done", s.Name)
			}
			// AWS's next notice, a second before the current release reads it.
			next := s
			next.id = s.afterID
			msg = earlierMessage{ReceiveCount: 1, AfterDeploy: true,
				Body: earlierNotice(t, next, id, at.Add(time.Duration(s.AgeSeconds-1)*time.Second), s.after)}
		} else if msg.ReceiveCount == 0 {
			t.Errorf("%s: the release finished with its message (%+v); the case needs it in flight", s.Name, c.Logged)
		}
		c.Node = earlierNormalised(t, wrote(nodes[i], l.getNode(ctx, t, nodes[i].Name)), id, shift)
		c.Message = earlierNormalised(t, msg, id, shift)
		for _, b := range [][]byte{c.Node, c.Message} {
			if bytes.Contains(b, []byte(nodes[i].Name)) {
				t.Errorf("%s: the node's name %s is in the case; the upgrade test cannot replace it", s.Name, nodes[i].Name)
			}
		}
		cases = append(cases, c)
	}
	earlierWrite(t, out, cases)
}

// earlierNotice is the release's sample of s's notice, for instance id at
// time at, with s's EventBridge id.
func earlierNotice(t *testing.T, s earlierSpec, id string, at time.Time, state string) []byte {
	var ev map[string]any
	if err := json.Unmarshal(eventBody(t, s.event), &ev); err != nil {
		t.Fatal(err)
	}
	ev["id"], ev["time"], ev["region"] = s.id, at.Format(time.RFC3339), awsfake.Region
	d := ev["detail"].(map[string]any)
	if s.Hook != nil {
		forLifecycle(id, s.Hook.Group, s.Hook.Name, s.Hook.Token, awsfake.Region)(ev)
		ev["resources"] = []any{fmt.Sprintf("arn:aws:autoscaling:%s:%s:autoScalingGroup:042cba90-ad2f-431c-9b4d-6d9055bcc9fb:autoScalingGroupName/%s",
			awsfake.Region, ev["account"], s.Hook.Group)}
	} else {
		forEC2Instance(id, awsfake.Region)(ev)
	}
	if state != "" {
		d["state"] = state
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wrote is what changed on a node between before and after.
func wrote(before, after *corev1.Node) earlierNode {
	w := earlierNode{Unschedulable: after.Spec.Unschedulable && !before.Spec.Unschedulable,
		Labels: changed(before.Labels, after.Labels), Annotations: changed(before.Annotations, after.Annotations)}
	for _, m := range after.ManagedFields {
		if !slices.ContainsFunc(before.ManagedFields, func(b metav1.ManagedFieldsEntry) bool { return b.Manager == m.Manager }) &&
			!slices.Contains(w.FieldManagers, m.Manager) {
			w.FieldManagers = append(w.FieldManagers, m.Manager)
		}
	}
	for _, tn := range after.Spec.Taints {
		if !slices.ContainsFunc(before.Spec.Taints, func(b corev1.Taint) bool { return b.MatchTaint(&tn) }) {
			w.Taints = append(w.Taints, tn)
		}
	}
	return w
}

func changed(before, after map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range after {
		if b, ok := before[k]; !ok || b != v {
			out[k] = v
		}
	}
	return out
}

// inFlight is how msg, retried, stands on the queue after the release: its
// next receive count and the visibility the release last set.
func inFlight(l *live, queued []awsfake.MessageState, msg message) earlierMessage {
	m := earlierMessage{Body: msg.body}
	for _, q := range queued {
		if q.Body == string(msg.body) {
			m.ReceiveCount = len(q.Receives) + 1
		}
	}
	for _, v := range l.aws.VisibilityChanges() {
		if v.ReceiptHandle == l.receipt(msg.id) {
			m.HiddenForSeconds = v.Timeout
		}
	}
	return m
}

// earlierShift moves every RFC 3339 time in v by d, those within a text
// too. The upgrade test's shiftTimes moves them on again; this file cannot
// share it, since it is built in the release's tree.
func earlierShift(v any, d time.Duration) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = earlierShift(e, d)
		}
	case []any:
		for i, e := range v {
			v[i] = earlierShift(e, d)
		}
	case string:
		return rfc3339.ReplaceAllStringFunc(v, func(s string) string {
			at, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return s
			}
			return at.Add(d).UTC().Format(time.RFC3339)
		})
	}
	return v
}

var rfc3339 = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)

func earlierWrite(t *testing.T, path string, cases []earlierCaseOut) {
	commit := strings.TrimSpace(os.Getenv("DRAINPIPE_EARLIER_COMMIT"))
	release := os.Getenv("DRAINPIPE_EARLIER_RELEASE")
	f := struct {
		Release     string           `json:"release"`
		Commit      string           `json:"commit"`
		GeneratedBy string           `json:"generatedBy"`
		About       string           `json:"about"`
		WrittenAt   string           `json:"writtenAt"`
		Cases       []earlierCaseOut `json:"cases"`
	}{
		Release: release, Commit: commit, WrittenAt: earlierWrittenAt.Format(time.RFC3339),
		GeneratedBy: "test/events/earlier/gen/generate.sh " + release + " " + commit,
		About: "Nodes and in-flight messages as Drainpipe " + release + " left them, written by that release's own bootstrap " +
			"(against its own sandbox and AWS wire fakes) and read back: node holds exactly what the release changed on the node, " +
			"message the notice as AWS sent it, the receive count its next delivery carries and the visibility timeout the release " +
			"set, releaseLogged how the release logged the record. Times are moved so the release acted at writtenAt; the upgrade test " +
			"moves them to ageSeconds before now. {instance} stands for the node's instance id.",
		Cases: cases,
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
