package stack

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/google/go-cmp/cmp"
)

func TestRulePatterns(t *testing.T) {
	// Every rule matches the stack's own account only.
	const account = `"account":[{"Ref":"AWS::AccountId"}],`
	fixed := []string{
		`{` + account + `"detail-type":["AWS Health Event"],"detail":{"eventTypeCategory":["scheduledChange"],"service":["EC2"]},"source":["aws.health"]}`,
		`{` + account + `"detail-type":["EC2 Instance Rebalance Recommendation"],"source":["aws.ec2"]}`,
		`{` + account + `"detail-type":["EC2 Capacity Reservation Instance Interruption Warning"],"source":["aws.ec2"]}`,
		`{` + account + `"detail-type":["Capacity Block Expiration Warning","Capacity Block Reservation Expiration Warning"],"source":["aws.ec2"]}`,
		`{` + account + `"detail-type":["EC2 Instance State-change Notification"],"detail":{"state":["stopping","stopped","shutting-down","terminated","pending","running"]},"source":["aws.ec2"]}`,
		`{` + account + `"detail-type":["EC2 Spot Instance Interruption Warning"],"source":["aws.ec2"]}`,
		// The sweep's schedule (sweepInterval's default), to the same queue.
		`{"ScheduleExpression":"rate(5 minutes)"}`,
	}
	// Terminate and launch lifecycle actions, both for the groups only.
	asg := func(groups string) []string {
		return []string{
			`{` + account + `"detail-type":["EC2 Instance-terminate Lifecycle Action"],"detail":{"AutoScalingGroupName":` + groups + `,"LifecycleHookName":["drainpipe","drainpipe-launch"]},"source":["aws.autoscaling"]}`,
			`{` + account + `"detail-type":["EC2 Instance-launch Lifecycle Action"],"detail":{"AutoScalingGroupName":` + groups + `,"LifecycleHookName":["drainpipe","drainpipe-launch"]},"source":["aws.autoscaling"]}`,
		}
	}
	tests := []struct {
		name   string
		names  []string
		prefix string
		want   []string
	}{
		{"names and prefix", []string{"workers", "gpu"}, "eks-", append(slices.Clone(fixed), asg(`["workers","gpu",{"prefix":"eks-"}]`)...)},
		{"names only", []string{"workers"}, "", append(slices.Clone(fixed), asg(`["workers"]`)...)},
		{"prefix only", nil, "eks-", append(slices.Clone(fixed), asg(`[{"prefix":"eks-"}]`)...)},
		{"no groups: no lifecycle rule", nil, "", fixed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testProps(t)
			p.ASGNames, p.ASGNamePrefix = tt.names, tt.prefix
			tpl := synth(t, p)
			var got []string
			for _, r := range tpl.ofType("AWS::Events::Rule") {
				pattern := r.Properties["EventPattern"]
				if pattern == nil {
					pattern = map[string]any{"ScheduleExpression": r.Properties["ScheduleExpression"]}
				}
				b, _ := json.Marshal(pattern) // map keys come out sorted
				got = append(got, string(b))
				// Every notice to the work queue and its copy to the cordon
				// queue; the sweep's Scheduled Events to the work queue only.
				want := []string{"${Queue.Arn}", "${CordonQueue.Arn}"}
				if r.Properties["EventPattern"] == nil {
					want = want[:1]
				}
				var arns []string
				for _, tg := range asList(r.Properties["Targets"]) {
					target := tg.(map[string]any)
					arns = append(arns, tpl.render(target["Arn"]))
					dl, _ := target["DeadLetterConfig"].(map[string]any)
					if got, want := tpl.render(dl["Arn"]), "${DeadLetterQueue.Arn}"; got != want {
						t.Errorf("rule dead-letter target = %s, want %s", got, want)
					}
				}
				if !slices.Equal(arns, want) {
					t.Errorf("rule targets = %v, want %v", arns, want)
				}
			}
			slices.Sort(got)
			var want []string
			for _, w := range tt.want { // normalized like got: keys sorted
				var v any
				if err := json.Unmarshal([]byte(w), &v); err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(v)
				want = append(want, string(b))
			}
			slices.Sort(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("event patterns (-want +got):\n%s", diff)
			}
		})
	}
}

func TestQueues(t *testing.T) {
	tests := []struct {
		timeout     time.Duration
		maxReceives int
	}{{16 * time.Second, 1}, {5 * time.Minute, 5}, {15 * time.Minute, 10}}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s×%d", tt.timeout, tt.maxReceives), func(t *testing.T) {
			p := testProps(t)
			p.Timeout, p.MaxReceiveCount = tt.timeout, tt.maxReceives
			tpl := synth(t, p)
			queue, dlq := tpl.byAlias(t, "Queue"), tpl.byAlias(t, "DeadLetterQueue")
			for name, q := range map[string]resource{"queue": queue, "dead-letter queue": dlq} {
				if q.Properties["SqsManagedSseEnabled"] != true || q.Properties["KmsMasterKeyId"] != nil {
					t.Errorf("%s: SqsManagedSseEnabled = %v, KmsMasterKeyId = %v; want SSE-SQS", name, q.Properties["SqsManagedSseEnabled"], q.Properties["KmsMasterKeyId"])
				}
			}
			fn := tpl.byAlias(t, "Function")
			timeout, visibility := number(fn.Properties["Timeout"]), number(queue.Properties["VisibilityTimeout"])
			if timeout != tt.timeout.Seconds() || visibility < 6*timeout {
				t.Errorf("visibility %vs with function timeout %vs; want timeout %v and visibility ≥ 6×", visibility, timeout, tt.timeout.Seconds())
			}
			retention := number(queue.Properties["MessageRetentionPeriod"])
			if retention < float64(tt.maxReceives)*visibility {
				t.Errorf("retention %vs < %d attempts × visibility %vs", retention, tt.maxReceives, visibility)
			}
			if dlqRetention := number(dlq.Properties["MessageRetentionPeriod"]); dlqRetention <= retention {
				t.Errorf("dead-letter retention %vs ≤ queue retention %vs (a DLQ keeps the original enqueue time)", dlqRetention, retention)
			}
			redrive := queue.Properties["RedrivePolicy"].(map[string]any)
			if got := tpl.render(redrive["deadLetterTargetArn"]); got != "${DeadLetterQueue.Arn}" {
				t.Errorf("redrive target = %s, want the dead-letter queue", got)
			}
			env := fn.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
			want := float64(tt.maxReceives)
			if got, envGot := number(redrive["maxReceiveCount"]), number(env["DRAINPIPE_MAX_RECEIVE_COUNT"]); got != want || envGot != want {
				t.Errorf("maxReceiveCount = %v, DRAINPIPE_MAX_RECEIVE_COUNT = %v; want both %v", got, envGot, want)
			}
		})
	}
}

func TestQueuePolicies(t *testing.T) {
	tpl := synth(t, testProps(t))
	for _, q := range []string{"Queue", "DeadLetterQueue", "CordonQueue"} {
		rules := len(tpl.ofType("AWS::Events::Rule"))
		if q == "CordonQueue" {
			rules-- // the sweep's rule sends to the work queue only
		}
		t.Run(q, func(t *testing.T) {
			var tlsDeny, fromRules int
			for _, s := range tpl.statements() {
				if s.Where != "QueuePolicy(${"+q+"})" {
					continue
				}
				switch {
				case s.Effect == "Deny" && slices.Equal(s.Actions, []string{"sqs:SendMessage"}):
					// the senders' deny: TestQueuesDenySendingToOthers
				case s.Effect == "Deny" && slices.Contains(s.Actions, "sqs:PurgeQueue"):
					// the consumers' deny: TestConsumersGuarded
				case s.Effect == "Deny" && slices.Contains(s.Actions, "sqs:SetQueueAttributes"),
					s.Effect == "Deny" && slices.Contains(s.Actions, "sqs:StartMessageMoveTask"):
					// the queue control and message move denies: TestQueueControlEvaluated
				case s.Effect == "Deny":
					want := statement{Where: s.Where, Effect: "Deny", Principal: `{"AWS":"*"}`, Actions: []string{"sqs:*"},
						Resources: []string{"${" + q + ".Arn}"}, Condition: `{"Bool":{"aws:SecureTransport":"false"}}`}
					if diff := cmp.Diff(want, s); diff != "" {
						t.Errorf("deny statement (-want +got):\n%s", diff)
					}
					tlsDeny++
				case s.Principal == `{"Service":"events.amazonaws.com"}`:
					// One statement for all the stack's rules (one each
					// would fill SQS's 8,192 bytes).
					want := `{"ArnEquals":{"aws:SourceArn":[` + strings.TrimSuffix(strings.Repeat(`"${Rule.Arn}",`, rules), ",") + `]}}`
					if !slices.Equal(s.Actions, []string{"sqs:SendMessage"}) || s.Condition != want {
						t.Errorf("EventBridge statement actions %v condition %s, want sqs:SendMessage on %s", s.Actions, s.Condition, want)
					}
					fromRules++
				default:
					t.Errorf("unexpected statement: %+v", s)
				}
			}
			if tlsDeny != 1 || fromRules != 1 {
				t.Errorf("got %d TLS deny and %d rule statements, want 1 and 1", tlsDeny, fromRules)
			}
		})
	}
}

func TestEventSource(t *testing.T) {
	p := testProps(t)
	p.BatchSize, p.BatchWindow, p.MaxConcurrency = 25, 2*time.Second, 40
	tpl := synth(t, p)
	got := eventSources(t, tpl)["${Queue.Arn}"]
	want := map[string]string{
		"BatchSize":                      "25",
		"EventSourceArn":                 "${Queue.Arn}",
		"FunctionName":                   "${Function}",
		"FunctionResponseTypes":          "ReportBatchItemFailures",
		"MaximumBatchingWindowInSeconds": "2",
		"ScalingConfig":                  `{"MaximumConcurrency":40}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("event source mapping (-want +got):\n%s", diff)
	}
}

func TestFunction(t *testing.T) {
	p := testProps(t)
	p.DryRun, p.RequiredTag, p.MemoryMB = true, "kubernetes.io/cluster/prod=owned", 512
	p.Actions = Actions{Rebalance: "none", ASGLifecycle: "cordon-and-drain"}
	p.Env = map[string]string{"DRAINPIPE_LOG_LEVEL": "debug"}
	tpl := synth(t, p)
	fn := tpl.byAlias(t, "Function")
	if got := tpl.Resources[FunctionLogicalID].Type; got != "AWS::Lambda::Function" {
		t.Errorf("resource %q is %q, want the function (the README's sam command names it)", FunctionLogicalID, got)
	}
	got := map[string]string{}
	for _, k := range []string{"Runtime", "Architectures", "Handler", "MemorySize", "Timeout", "LoggingConfig", "Environment"} {
		got[k] = tpl.render(fn.Properties[k])
	}
	want := map[string]string{
		"Runtime":       "provided.al2023",
		"Architectures": "arm64",
		"Handler":       "bootstrap",
		"MemorySize":    "512",
		"Timeout":       "300",
		"LoggingConfig": `{"LogFormat":"JSON","LogGroup":"${LogGroup}"}`,
		"Environment": `{"Variables":{"DRAINPIPE_ACCEPT":"eventbridge","DRAINPIPE_ACTION_ASG_LIFECYCLE":"cordon-and-drain","DRAINPIPE_ACTION_REBALANCE":"none",` +
			`"DRAINPIPE_ASG_NAMES":"workers","DRAINPIPE_ASG_NAME_PREFIX":"eks-",` +
			`"DRAINPIPE_CLUSTERS":"prod,staging","DRAINPIPE_CORDON_QUEUE_ARN":"${CordonQueue.Arn}","DRAINPIPE_DRY_RUN":"true",` +
			`"DRAINPIPE_LIFECYCLE_HOOK_NAMES":"drainpipe,drainpipe-launch","DRAINPIPE_LOG_LEVEL":"debug",` +
			`"DRAINPIPE_MAX_CONCURRENCY":"10","DRAINPIPE_MAX_EVENT_AGE":"3600s","DRAINPIPE_MAX_RECEIVE_COUNT":"5","DRAINPIPE_METRICS_STACK":"Test","DRAINPIPE_REQUIRED_TAG":"kubernetes.io/cluster/prod=owned",` +
			`"DRAINPIPE_RETRY_DELAY":"15s","DRAINPIPE_SWEEP_RULE":"${Rule.Arn}","GOGC":"400"}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("function (-want +got):\n%s", diff)
	}
	if got := number(tpl.byAlias(t, "LogGroup").Properties["RetentionInDays"]); got != 30 {
		t.Errorf("log retention = %v days, want 30", got)
	}
}

func TestAccessEntries(t *testing.T) {
	tests := []struct {
		name    string
		awsAuth []string
		want    []string
	}{
		{"all clusters", nil, []string{"prod", "staging"}},
		{"prod on aws-auth", []string{"prod"}, []string{"staging"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testProps(t)
			p.AWSAuthClusters = tt.awsAuth
			tpl := synth(t, p)
			var got []string
			for _, e := range tpl.ofType("AWS::EKS::AccessEntry") {
				pr := e.Properties
				if g := tpl.render(pr["PrincipalArn"]); g != "${FunctionRole.Arn}" {
					t.Errorf("access entry principal = %s, want the function role", g)
				}
				if g := strs(pr["KubernetesGroups"]); !slices.Equal(g, []string{"drainpipe"}) || pr["Type"] != "STANDARD" {
					t.Errorf("access entry groups %v type %v, want [drainpipe] STANDARD", g, pr["Type"])
				}
				got = append(got, tpl.render(pr["ClusterName"]))
			}
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("access entries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAlarms(t *testing.T) {
	const topic = "arn:aws:sns:eu-west-1:123456789012:oncall"
	for _, withTopic := range []bool{false, true} {
		t.Run("topic="+strconv.FormatBool(withTopic), func(t *testing.T) {
			p := testProps(t)
			p.AlarmOldestMessageAge, p.AlarmErrors = 15*time.Minute, 3
			if withTopic {
				p.AlarmTopicARN = topic
			}
			tpl := synth(t, p)
			var got []string
			for _, a := range tpl.ofType("AWS::CloudWatch::Alarm") {
				pr := a.Properties
				on := "all"
				if dims := asList(pr["Dimensions"]); len(dims) > 0 {
					on = tpl.render(dims[0].(map[string]any)["Value"])
				}
				got = append(got, fmt.Sprintf("%s/%s %s %s %v on %s", pr["Namespace"], pr["MetricName"], pr["Statistic"],
					pr["ComparisonOperator"], pr["Threshold"], on))
				wantActions := "${Topic}" // created so alarms reach someone
				if withTopic {
					wantActions = topic
				}
				if g := tpl.render(pr["AlarmActions"]); g != wantActions && !(g == "null" && wantActions == "") {
					t.Errorf("alarm actions = %s, want %q", g, wantActions)
				}
			}
			slices.Sort(got)
			// The function's metrics are this stack's only (dimension stack=Test).
			want := []string{
				"AWS/Lambda/Errors Sum GreaterThanOrEqualToThreshold 3 on ${Function}",
				"AWS/Lambda/Throttles Sum GreaterThanOrEqualToThreshold 1 on ${Function}",
				// A copy the function would ignore: its node was not cordoned at once.
				"AWS/SQS/ApproximateAgeOfOldestMessage Maximum GreaterThanThreshold 30 on ${CordonQueue.QueueName}",
				"AWS/SQS/ApproximateNumberOfMessagesVisible Maximum GreaterThanThreshold 0 on ${DeadLetterQueue.QueueName}",
				// Messages nobody received, not held ones (TestAlarmsMeanSomething).
				"AWS/SQS/ApproximateNumberOfMessagesVisible Minimum GreaterThanThreshold 0 on ${Queue.QueueName}",
				"Drainpipe/DeadlineHit Sum GreaterThanOrEqualToThreshold 1 on Test",
				"Drainpipe/DrainBlockedFor Maximum GreaterThanOrEqualToThreshold 900 on Test",
				// Rejected records are deleted: forged or broken messages show here.
				"Drainpipe/Records Sum GreaterThanThreshold 0 on rejected",
				// A sweep repair means a notice was lost.
				"Drainpipe/SweepRepairs Sum GreaterThanThreshold 0 on Test",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("alarms (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOutputs(t *testing.T) {
	tpl := synth(t, testProps(t))
	got := map[string]string{}
	for k, o := range tpl.Outputs {
		got[k] = tpl.render(o.Value)
	}
	want := map[string]string{
		"QueueUrl":           "${Queue}",
		"QueueArn":           "${Queue.Arn}",
		"DeadLetterQueueUrl": "${DeadLetterQueue}",
		"CordonQueueUrl":     "${CordonQueue}",
		"FunctionName":       "${Function}",
		"RoleArn":            "${FunctionRole.Arn}",
		"AlarmTopicArn":      "${Topic}",
		"DashboardName":      "${Dashboard}",
		"LogGroupName":       "${LogGroup}",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
}

func TestNewRejectsMissingAsset(t *testing.T) {
	p := testProps(t)
	p.AssetDir = t.TempDir() // no bootstrap in it
	_, err := New(awscdk.NewApp(nil), "Test", p, nil)
	if err == nil || !strings.Contains(err.Error(), "make build") {
		t.Errorf("New with no bootstrap: error %v, want one telling to run make build", err)
	}
}
