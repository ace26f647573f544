package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

// runCluster is the cluster the fake's instances are tagged for.
const runCluster = "run-cluster"

// hookToken is the lifecycle action's token (Auto Scaling's are UUIDs).
const hookToken = "6d1f2c3a-4b5e-4f60-8a7b-9c0d1e2f3a4b"

// runScene is one node of the sandbox with two pods of a Deployment on
// it, the EC2 instance behind it in the fake, and the fake's environment in
// the process's (the AWS SDK reads it there).
type runScene struct {
	env        *fixture.Env
	fake       *awsfake.Server
	kubeconfig string
	node       *corev1.Node
	instance   string
}

func newRunScene(ctx context.Context, t *testing.T) *runScene {
	t.Helper()
	sb := sandbox.ForTest(t)
	fake := awsfake.New()
	t.Cleanup(fake.Close)
	for _, kv := range fake.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	env := fixture.New(t, sb.RESTConfig())
	nodes := env.Nodes(ctx, 2, fixture.NodeOptions{Region: awsfake.Region})
	node := nodes[0]
	env.Deployment(ctx, "web", 2, fixture.OnNode(node.Name))
	env.PDB(ctx, "web", map[string]string{"app": "web"}, fixture.MaxUnavailable(1))
	if pods := env.PodsOnNode(ctx, node.Name); len(pods) != 2 {
		t.Fatalf("%d pods on %s, want the Deployment's 2", len(pods), node.Name)
	}
	id := fixture.InstanceID(node)
	fake.AddInstances(awsfake.Instance{
		ID:               id,
		PrivateDNSName:   node.Name,
		AvailabilityZone: node.Labels[corev1.LabelTopologyZone],
		Lifecycle:        "spot", // Spot warnings are checked against it
		Tags:             map[string]string{"eks:cluster-name": runCluster},
	})
	return &runScene{env: env, fake: fake, kubeconfig: sb.KubeconfigPath(), node: node, instance: id}
}

// newHookScene is a runScene whose instance has a pending terminate hook,
// and its state before the run.
func newHookScene(t *testing.T) (context.Context, *runScene, state) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	s := newRunScene(ctx, t)
	s.fake.AddLifecycleAction(awsfake.LifecycleAction{ASG: "workers", Hook: "drain", Token: hookToken, InstanceID: s.instance})
	return ctx, s, s.state(ctx, t)
}

// state is what a run may change: the node's cordon and taint, the pods
// left on it, and the hooks completed.
type state struct {
	Unschedulable bool
	Taints        []string
	Pods          []string
	Completed     []string
}

func (s *runScene) state(ctx context.Context, t *testing.T) state {
	t.Helper()
	n, err := s.env.Client.CoreV1().Nodes().Get(ctx, s.node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting node: %v", err)
	}
	st := state{Unschedulable: n.Spec.Unschedulable, Taints: []string{}, Pods: []string{}, Completed: []string{}}
	for _, tt := range n.Spec.Taints {
		st.Taints = append(st.Taints, tt.Key)
	}
	for _, p := range s.env.PodsOnNode(ctx, s.node.Name) {
		st.Pods = append(st.Pods, p.Name)
	}
	slices.Sort(st.Pods)
	for _, c := range s.fake.Completed() {
		st.Completed = append(st.Completed, c.Hook+"="+c.Result)
	}
	return st
}

// lifecycleBody is an Auto Scaling terminate hook as EventBridge sends it.
func lifecycleBody(id string) string {
	return fmt.Sprintf(`{"version":"0","id":"0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d","detail-type":"EC2 Instance-terminate Lifecycle Action",
"source":"aws.autoscaling","account":"123456789012","time":%q,"region":%q,"resources":[],
"detail":{"LifecycleActionToken":%q,"AutoScalingGroupName":"workers","LifecycleHookName":"drain",
"EC2InstanceId":%q,"LifecycleTransition":"autoscaling:EC2_INSTANCE_TERMINATING"}}`,
		time.Now().UTC().Format(time.RFC3339), awsfake.Region, hookToken, id)
}

// sqsWrap makes body a one-record Lambda SQS event.
func sqsWrap(t *testing.T, id, body string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"Records": []map[string]any{{
		"messageId": id, "body": body, "eventSource": "aws:sqs",
		"attributes": map[string]string{"ApproximateReceiveCount": "1"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRunLocal handles a terminate hook (as a Lambda SQS event) and the
// same message as a raw body, against the sandbox through its kubeconfig,
// with and without --dry-run.
func TestRunLocal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dryRun  bool
		wrap    bool
		changed bool // the node is drained and the hook completed
	}{
		{name: "sqs event", wrap: true, changed: true},
		{name: "raw body", changed: true},
		{name: "dry run", dryRun: true, wrap: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, s, before := newHookScene(t)

			input := lifecycleBody(s.instance)
			if tc.wrap {
				input = sqsWrap(t, "m-1", input)
			}
			args := []string{"run", "--kubeconfig", s.kubeconfig, "--timeout", "90s", "-"}
			if tc.dryRun {
				args = append(args, "--dry-run") // after the input: flags may come anywhere
			} else {
				args = append(args, "--yes", "--function-arn", runFunction)
			}
			env := map[string]string{"DRAINPIPE_CLUSTERS": runCluster}
			code, stdout, stderr := runCLI(t, env, input, args...)
			if code != exitOK {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			if got, want := strings.TrimSpace(stdout), `{"batchItemFailures":[]}`; got != want {
				t.Errorf("stdout = %s, want %s", got, want)
			}
			if got := len(s.fake.CallsTo("DescribeInstances")); got == 0 {
				t.Errorf("DescribeInstances calls = 0, want the instance looked up")
			}

			want := before
			if tc.changed {
				want = state{Unschedulable: true, Taints: []string{"drainpipe.dev/interruption"}, Pods: []string{}, Completed: []string{"drain=CONTINUE"}}
			}
			if diff := cmp.Diff(want, s.state(ctx, t)); diff != "" {
				t.Errorf("after run (-want +got):\n%s\nstderr: %s", diff, stderr)
			}
			if tc.dryRun {
				for _, a := range []string{"CompleteLifecycleAction", "RecordLifecycleActionHeartbeat"} {
					if got := s.fake.CallsTo(a); len(got) != 0 {
						t.Errorf("dry run sent %d %s calls, want none", len(got), a)
					}
				}
				if !strings.Contains(stderr, "dry run: would cordon and drain node "+s.node.Name) {
					t.Errorf("stderr lacks the dry-run line for %s:\n%s", s.node.Name, stderr)
				}
			}
		})
	}
}

// drainpipe run's records come from no queue: a record left to retry is
// reported, and SQS is never asked to hasten it, even when the event names
// a queue the AWS endpoint knows.
func TestRunRetryLeavesQueueAlone(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	s := newRunScene(ctx, t)
	s.env.Deployment(ctx, "db", 2, fixture.PinnedTo(s.node.Name))
	s.env.PDB(ctx, "db", map[string]string{"app": "db"}, fixture.MinAvailable(2))
	s.fake.AddLifecycleAction(awsfake.LifecycleAction{ASG: "workers", Hook: "drain", Token: hookToken, InstanceID: s.instance})
	s.fake.AddQueue("123456789012", "drainpipe")
	event, err := json.Marshal(map[string]any{"Records": []map[string]any{{
		"messageId": "m-1", "receiptHandle": "AQEBm-1", "body": lifecycleBody(s.instance), "eventSource": "aws:sqs",
		"eventSourceARN": "arn:aws:sqs:" + awsfake.Region + ":123456789012:drainpipe",
		"attributes":     map[string]string{"ApproximateReceiveCount": "1"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	// The budget blocks the drain past the 8 s invocation (2 s reserve).
	env := map[string]string{"DRAINPIPE_CLUSTERS": runCluster, "DRAINPIPE_DEADLINE_RESERVE": "2s"}
	code, stdout, stderr := runCLI(t, env, string(event), "run", "--kubeconfig", s.kubeconfig, "--timeout", "8s", "--yes", "-")
	if got, want := strings.TrimSpace(stdout), `{"batchItemFailures":[{"itemIdentifier":"m-1"}]}`; code != exitRetry || got != want {
		t.Fatalf("exit %d, stdout %s; want %d and %s\nstderr: %s", code, got, exitRetry, want, stderr)
	}
	for _, c := range s.fake.Calls() {
		if c.Service == awsfake.ServiceSQS {
			t.Errorf("drainpipe run called SQS: %s %v", c.Action, c.Params)
		}
	}
}

// runFunction is the function the events of lifecycleBody are for.
const runFunction = "arn:aws:lambda:" + awsfake.Region + ":123456789012:function:drainpipe"

// drainpipe run writes to a cluster as the other writing commands do: only
// when confirmed (--yes, standard input not being a terminal), and only for
// events of the function's account and region, as the function itself.
func TestRunConfirmsAndChecksOrigin(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		region string // the event's
		code   int
		stderr string
	}{
		{"not confirmed", nil, awsfake.Region, exitUsage, "drainpipe run: not confirmed, nothing done. It would handle 1 record(s)"},
		{"another region", []string{"--yes"}, "eu-central-1", exitOK, `event from region \"eu-central-1\", not this function's region ` + awsfake.Region},
		{"another account", []string{"--yes", "--function-arn", "arn:aws:lambda:" + awsfake.Region + ":210987654321:function:drainpipe"},
			awsfake.Region, exitOK, `event from account \"123456789012\", not this function's account 210987654321`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, s, before := newHookScene(t)
			input := strings.Replace(lifecycleBody(s.instance), `"region":"`+awsfake.Region+`"`, `"region":"`+tc.region+`"`, 1)
			args := append([]string{"run", "--kubeconfig", s.kubeconfig, "--timeout", "90s", "-"}, tc.args...)
			code, stdout, stderr := runCLI(t, map[string]string{"DRAINPIPE_CLUSTERS": runCluster}, input, args...)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit %d, want %d; stderr %s\nwant it to contain %s\nstdout: %s", code, tc.code, stderr, tc.stderr, stdout)
			}
			if diff := cmp.Diff(before, s.state(ctx, t)); diff != "" {
				t.Errorf("run changed the cluster or a hook (-before +after):\n%s", diff)
			}
			if got := len(s.fake.CallsTo("DescribeInstances")); got != 0 {
				t.Errorf("DescribeInstances calls = %d, want none: nothing to act on", got)
			}
		})
	}
}

// TestRunUsage checks what run refuses before doing anything.
func TestRunUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no cluster", nil, []string{"run", "--kubeconfig", "x"}, "DRAINPIPE_CLUSTERS is not set"},
		{"two inputs", map[string]string{"DRAINPIPE_CLUSTERS": "a"}, []string{"run", "a.json", "b.json"}, "one input at most"},
		{"bad timeout", map[string]string{"DRAINPIPE_CLUSTERS": "a"}, []string{"run", "--timeout", "-1s"}, "--timeout must be positive"},
		{"bad config", map[string]string{"DRAINPIPE_CLUSTERS": "a", "DRAINPIPE_ACTION_SPOT": "explode"}, []string{"run"}, "DRAINPIPE_ACTION_SPOT"},
		{"bad flag", nil, []string{"run", "--nope"}, "flag provided but not defined"},
		{"bad function", map[string]string{"DRAINPIPE_CLUSTERS": "a"}, []string{"run", "--function-arn", "arn:aws:sqs:x"}, "--function-arn: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.env, "{}", tc.args...)
			if code != exitUsage || stdout != "" {
				t.Errorf("exit %d, stdout %q; want %d and nothing", code, stdout, exitUsage)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr = %q, want it to contain %q", stderr, tc.want)
			}
		})
	}
}

func TestSQSMessages(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	raw := sqsMessages([]byte(`{"source":"aws.ec2"}`), now)
	if got := len(raw); got != 1 {
		t.Fatalf("raw body: %d records, want 1", got)
	}
	if got, want := raw[0].Body, `{"source":"aws.ec2"}`; got != want {
		t.Errorf("raw body: body %q, want %q", got, want)
	}
	if got, want := raw[0].Attributes["ApproximateReceiveCount"], "1"; got != want {
		t.Errorf("raw body: receive count %q, want %q", got, want)
	}
	wrapped := sqsMessages([]byte(sqsWrap(t, "a", "x")), now)
	if got := []string{wrapped[0].MessageId, wrapped[0].Body}; !slices.Equal(got, []string{"a", "x"}) {
		t.Errorf("SQS event: %v, want [a x]", got)
	}
}
