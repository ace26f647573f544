package stack

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// dashboardBody decodes the dashboard's body (a Fn::Join of JSON pieces).
func dashboardBody(t *testing.T, tpl template) map[string]any {
	t.Helper()
	dashboards := tpl.ofType("AWS::CloudWatch::Dashboard")
	if len(dashboards) != 1 {
		t.Fatalf("%d dashboards, want 1", len(dashboards))
	}
	raw := tpl.render(dashboards[0].Properties["DashboardBody"])
	var body map[string]any
	if err := json.Unmarshal([]byte(raw), &body); err != nil {
		t.Fatalf("dashboard body is not JSON: %v\n%s", err, raw)
	}
	return body
}

func TestDashboard(t *testing.T) {
	body := dashboardBody(t, synth(t, testProps(t)))
	got := map[string][]string{}
	for _, w := range asList(body["widgets"]) {
		props, _ := w.(map[string]any)["properties"].(map[string]any)
		title, _ := props["title"].(string)
		for _, m := range asList(props["metrics"]) {
			var parts []string
			for _, e := range asList(m) {
				switch e := e.(type) {
				case string:
					parts = append(parts, e)
				case map[string]any:
					if s, ok := e["stat"].(string); ok {
						parts = append(parts, "stat="+s)
					}
					if x, ok := e["expression"].(string); ok {
						parts = append(parts, "expr="+x)
					}
				}
			}
			got[title] = append(got[title], strings.Join(parts, " "))
		}
	}
	want := map[string][]string{
		"Records by outcome": {
			"Drainpipe Records outcome done stack Test stat=Sum", "Drainpipe Records outcome ignored stack Test stat=Sum",
			"Drainpipe Records outcome rejected stack Test stat=Sum", "Drainpipe Records outcome retry stack Test stat=Sum"},
		// The cordon queue's oldest copy, in seconds: what CordonLagAlarm watches.
		"Queue latency (ms)": {"Drainpipe QueueLatency stack Test stat=p50", "Drainpipe QueueLatency stack Test stat=p99",
			"AWS/SQS ApproximateAgeOfOldestMessage QueueName ${CordonQueue.QueueName} stat=Maximum"},
		"Drain duration (ms)": {"Drainpipe DrainDuration stack Test stat=p50", "Drainpipe DrainDuration stack Test stat=p99"},
		"Stuck pods": {"Drainpipe PodsBlocked stack Test stat=Sum", "Drainpipe PodsTerminating stack Test stat=Sum",
			"Drainpipe DeadlineHit stack Test stat=Sum", "Drainpipe DrainsUnfinished stack Test stat=Sum",
			"Drainpipe DrainBlockedFor stack Test stat=Maximum"},
		"Dead-letter queue depth": {"AWS/SQS ApproximateNumberOfMessagesVisible QueueName ${DeadLetterQueue.QueueName} stat=Maximum"},
		"Errors and lifecycle hooks": {
			`expr=SEARCH('{Drainpipe,class,stack} MetricName="Errors" stack="Test"', 'Sum', 60)`,
			"Drainpipe HookCompletions outcome ok stack Test stat=Sum", "Drainpipe HookCompletions outcome error stack Test stat=Sum"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dashboard widgets (-want +got):\n%s", diff)
	}
}

func TestWebhookSecret(t *testing.T) {
	const (
		secret    = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:drainpipe/webhook"
		parameter = "arn:aws:ssm:eu-west-1:123456789012:parameter/drainpipe/webhook"
	)
	tests := []struct {
		arn  string
		want []statement
	}{
		{"", nil},
		{secret, []statement{{Effect: "Allow", Actions: []string{"secretsmanager:GetSecretValue"}, Resources: []string{secret, secret + "-??????"}}}},
		{parameter, []statement{{Effect: "Allow", Actions: []string{"ssm:GetParameter"}, Resources: []string{parameter}}}},
	}
	for _, tt := range tests {
		t.Run(tt.arn, func(t *testing.T) {
			p := testProps(t)
			p.WebhookSecretARN = tt.arn
			tpl := synth(t, p)
			var got []statement
			for _, s := range tpl.statements() {
				if s.Where == "Policy(${FunctionRole})" && (strings.HasPrefix(s.Actions[0], "secretsmanager:") || strings.HasPrefix(s.Actions[0], "ssm:")) {
					s.Where = ""
					got = append(got, s)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("secret statements (-want +got):\n%s", diff)
			}
			env, _ := tpl.byAlias(t, "Function").Properties["Environment"].(map[string]any)
			vars, _ := env["Variables"].(map[string]any)
			if got, _ := vars["DRAINPIPE_WEBHOOK_SECRET_ARN"].(string); got != tt.arn {
				t.Errorf("DRAINPIPE_WEBHOOK_SECRET_ARN = %q, want %q", got, tt.arn)
			}
		})
	}
}

func TestWebhookSecretValidated(t *testing.T) {
	p := testProps(t)
	p.WebhookSecretARN = "https://hooks.example.test/T000/B000/XXXX"
	err := p.Validate()
	if err == nil || !strings.Contains(err.Error(), "webhookSecretArn") {
		t.Errorf("Validate() = %v, want an error naming webhookSecretArn", err)
	}
	p.Env = map[string]string{"DRAINPIPE_WEBHOOK_SECRET_ARN": "x"}
	if err := p.Validate(); err == nil || !slices.ContainsFunc(strings.Split(err.Error(), "\n"), func(l string) bool {
		return strings.Contains(l, "DRAINPIPE_WEBHOOK_SECRET_ARN")
	}) {
		t.Errorf("Validate() = %v, want the env pass-through refused", err)
	}
}
