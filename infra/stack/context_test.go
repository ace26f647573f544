package stack

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFromContext(t *testing.T) {
	tests := []struct {
		name   string
		ctx    map[string]any
		change func(*Props) // applied to Defaults() to get the wanted props
	}{
		{"empty", nil, func(*Props) {}},
		{"cli strings", map[string]any{
			"clusters": "prod, staging", "asgNames": "a,b", "asgNamePrefix": "eks-", "dryRun": "true",
			"timeoutSeconds": "120", "batchSize": "20", "batchWindowSeconds": "1", "maxConcurrency": "50",
			"maxReceiveCount": "7", "retryDelaySeconds": "0", "actionRebalance": "none", "env": `{"DRAINPIPE_LOG_LEVEL":"debug"}`,
			"asgNotificationRole": "1", "awsAuthClusters": `["prod"]`,
		}, func(p *Props) {
			p.Clusters, p.ASGNames, p.ASGNamePrefix, p.DryRun = []string{"prod", "staging"}, []string{"a", "b"}, "eks-", true
			p.Timeout, p.BatchSize, p.BatchWindow, p.MaxConcurrency = 2*time.Minute, 20, time.Second, 50
			p.MaxReceiveCount, p.RetryDelay, p.Actions.Rebalance = 7, 0, "none"
			p.Env, p.ASGNotificationRole, p.AWSAuthClusters = map[string]string{"DRAINPIPE_LOG_LEVEL": "debug"}, true, []string{"prod"}
		}},
		{"cdk.json types", map[string]any{
			"clusters": []any{"prod"}, "dryRun": true, "memorySize": 512.0, "logRetentionDays": 90.0, "retryDelaySeconds": 30.0,
			"alarmOldestMessageAgeSeconds": 900.0, "env": map[string]any{"DRAINPIPE_KUBE_QPS": "50"},
		}, func(p *Props) {
			p.Clusters, p.DryRun, p.MemoryMB, p.LogRetention, p.RetryDelay = []string{"prod"}, true, 512, 90, 30*time.Second
			p.AlarmOldestMessageAge, p.Env = 15*time.Minute, map[string]string{"DRAINPIPE_KUBE_QPS": "50"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromContext(func(k string) any { return tt.ctx[k] })
			if err != nil {
				t.Fatalf("FromContext: %v", err)
			}
			want := Defaults()
			tt.change(&want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("props (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromContextRejectsBadTypes(t *testing.T) {
	ctx := map[string]any{"clusters": 3.0, "dryRun": "maybe", "batchSize": 1.5, "env": "not json", "asgNames": `["a",`}
	_, err := FromContext(func(k string) any { return ctx[k] })
	for _, key := range []string{"clusters", "dryRun", "batchSize", "env", "asgNames"} {
		if err == nil || !strings.Contains(err.Error(), "context "+key+":") {
			t.Errorf("FromContext error %v does not name %s", err, key)
		}
	}
}

// TestContextKeysDocumented keeps the context table in docs/deploy.md in step with
// the keys the app reads.
func TestContextKeysDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ContextKeys {
		if !strings.Contains(string(readme), "| `"+k+"` |") {
			t.Errorf("docs/deploy.md has no context table row for `%s`", k)
		}
	}
}
