package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The deployed names the simulation gives the template's resources.
const (
	simAccount = "123456789012"
	simRegion  = "eu-west-1"
)

// concrete replaces every reference in v by a deployed value: a queue's,
// role's or rule's ARN made from its logical ID, the account and region
// above.
func (tpl template) concrete(v any) any {
	switch v := v.(type) {
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = tpl.concrete(e)
		}
		return out
	case map[string]any:
		if id, ok := v["Ref"].(string); ok {
			switch id {
			case "AWS::AccountId":
				return simAccount
			case "AWS::Region":
				return simRegion
			case "AWS::Partition":
				return "aws"
			case "AWS::URLSuffix":
				return "amazonaws.com"
			}
			return tpl.arn(id)
		}
		if ga, ok := v["Fn::GetAtt"].([]any); ok && len(ga) == 2 {
			return tpl.arn(fmt.Sprint(ga[0]))
		}
		if j, ok := v["Fn::Join"].([]any); ok && len(j) == 2 {
			var parts []string
			for _, e := range asList(j[1]) {
				parts = append(parts, fmt.Sprint(tpl.concrete(e)))
			}
			return strings.Join(parts, fmt.Sprint(j[0]))
		}
		if sub, ok := v["Fn::Sub"].(string); ok {
			return strings.NewReplacer("${AWS::AccountId}", simAccount, "${AWS::Region}", simRegion, "${AWS::Partition}", "aws").Replace(sub)
		}
		out := map[string]any{}
		for k, e := range v {
			out[k] = tpl.concrete(e)
		}
		return out
	}
	return v
}

// arn is the deployed ARN of the resource with logical ID id.
func (tpl template) arn(id string) string {
	switch tpl.Resources[id].Type {
	case "AWS::SQS::Queue":
		return fmt.Sprintf("arn:aws:sqs:%s:%s:%s", simRegion, simAccount, tpl.alias[id])
	case "AWS::IAM::Role":
		return fmt.Sprintf("arn:aws:iam::%s:role/%s", simAccount, id)
	case "AWS::Events::Rule":
		return fmt.Sprintf("arn:aws:events:%s:%s:rule/%s", simRegion, simAccount, id)
	}
	return "arn:aws:unknown:" + id
}

// policyOf returns the concrete policy document of the one resource of typ
// whose policy applies to (or is attached to) target.
func (tpl template) policyOf(t *testing.T, typ, key, target string) any {
	t.Helper()
	for _, r := range tpl.Resources {
		if r.Type != typ {
			continue
		}
		for _, ref := range asList(r.Properties[key]) {
			if tpl.render(ref) == target {
				return tpl.concrete(r.Properties["PolicyDocument"])
			}
		}
	}
	t.Fatalf("no %s for %s", typ, target)
	return nil
}

type simRequest struct {
	Name             string         `json:"name"`
	Principal        string         `json:"principal"`
	Action           string         `json:"action"`
	Resource         string         `json:"resource"`
	AccountID        string         `json:"accountId"`
	Context          map[string]any `json:"context"`
	IdentityPolicies []any          `json:"identityPolicies"`
}

// simulate evaluates the requests against policy with iam-simulate
// (testdata/iamsim, installed by npm ci), returning each one's result.
func simulate(t *testing.T, policy any, reqs []simRequest) map[string]string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs npm ci and the IAM policy simulator")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed: the queue policy cannot be evaluated with @cloud-copilot/iam-simulate")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "iamsim"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@cloud-copilot", "iam-simulate")); err != nil {
		cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}
	in, err := json.Marshal(map[string]any{"resourcePolicy": policy, "requests": reqs})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "node", "sim.mjs")
	cmd.Dir, cmd.Stdin = dir, bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node sim.mjs: %v\n%s", err, stderr.String())
	}
	var results []struct{ Name, Result string }
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("simulator output %q: %v", out, err)
	}
	got := map[string]string{}
	for _, r := range results {
		got[r.Name] = r.Result
	}
	return got
}

// TestQueuePolicyEvaluated (issue 25, items 3 and 5): each queue's policy
// as AWS evaluates it, for concrete requests. An `sqs:*` admin of the same
// account cannot take, delete, purge or hide messages, nor send; a listed
// operator role can consume every queue, the function's role (with its own
// policy) the work and cordon queues but send to none; only the stack's
// rules may send as EventBridge (to the dead-letter queue too, what they
// cannot deliver).
func TestQueuePolicyEvaluated(t *testing.T) {
	p := testProps(t)
	operator := "arn:aws:iam::" + simAccount + ":role/oncall"
	p.OperatorRoleARNs = []string{operator}
	tpl := synth(t, p)
	fnRole := tpl.arn(findID(t, tpl, "FunctionRole"))
	fnPolicy := tpl.policyOf(t, "AWS::IAM::Policy", "Roles", "${FunctionRole}")
	admin := "arn:aws:iam::" + simAccount + ":role/admin"
	sqsAll := map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": "Allow", "Action": "sqs:*", "Resource": "*"}}}
	var rule string // an interruption rule: the sweep's does not send to the cordon queue
	for id, r := range tpl.Resources {
		if r.Type == "AWS::Events::Rule" && rule == "" && tpl.alias[id] != "QueueControlAlarm" && r.Properties["EventPattern"] != nil {
			rule = tpl.arn(id)
		}
	}
	for _, q := range []struct {
		alias string
		// fnConsumes: the function's own policy lets it consume this
		// queue (only the queue: the dead-letter queue is left implicitly
		// denied to it).
		fnConsumes string
	}{{"Queue", "Allowed"}, {"DeadLetterQueue", "ImplicitlyDenied"}, {"CordonQueue", "Allowed"}} {
		t.Run(q.alias, func(t *testing.T) {
			queue := tpl.arn(findID(t, tpl, q.alias))
			policy := tpl.policyOf(t, "AWS::SQS::QueuePolicy", "Queues", "${"+q.alias+"}")
			var reqs []simRequest
			want := map[string]string{}
			ask := func(who, principal string, identity any, action, result string, extra map[string]string) {
				ctx := map[string]any{"aws:SecureTransport": "true"}
				if strings.HasPrefix(principal, "arn:") { // a service has no principal ARN
					ctx["aws:PrincipalArn"], ctx["aws:PrincipalAccount"] = principal, simAccount
				}
				for k, v := range extra {
					ctx[k] = v
				}
				var ids []any
				if identity != nil {
					ids = []any{identity}
				}
				name := who + " " + action
				reqs = append(reqs, simRequest{Name: name, Principal: principal, Action: action, Resource: queue, AccountID: simAccount, Context: ctx, IdentityPolicies: ids})
				want[name] = result
			}
			for _, a := range []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:PurgeQueue", "sqs:ChangeMessageVisibility"} {
				ask("foreign admin", admin, sqsAll, a, "ExplicitlyDenied", nil)
				ask("operator", operator, sqsAll, a, "Allowed", nil)
			}
			for _, a := range []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility"} {
				ask("function", fnRole, fnPolicy, a, q.fnConsumes, nil)
			}
			ask("foreign admin", admin, sqsAll, "sqs:SendMessage", "ExplicitlyDenied", nil)
			ask("function", fnRole, fnPolicy, "sqs:SendMessage", "ExplicitlyDenied", nil)
			ask("the stack's rule", "events.amazonaws.com", nil, "sqs:SendMessage", "Allowed", map[string]string{"aws:SourceArn": rule})
			// Refused either way: whether {"AWS": "*"} names a service is the
			// simulator's reading; no Allow matches it.
			ask("another rule", "events.amazonaws.com", nil, "sqs:SendMessage", "refused",
				map[string]string{"aws:SourceArn": "arn:aws:events:" + simRegion + ":" + simAccount + ":rule/not-ours"})
			// Without TLS, no one.
			ask("operator over plain HTTP", operator, sqsAll, "sqs:ReceiveMessage", "ExplicitlyDenied", map[string]string{"aws:SecureTransport": "false"})

			got := simulate(t, policy, reqs)
			for name, w := range want {
				if w == "refused" && strings.HasSuffix(got[name], "Denied") {
					got[name] = w
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s policy decisions (-want +got):\n%s", q.alias, diff)
			}
		})
	}
}

// findID returns the logical ID of the resource aliased alias.
func findID(t *testing.T, tpl template, alias string) string {
	t.Helper()
	for id := range tpl.Resources {
		if tpl.alias[id] == alias {
			return id
		}
	}
	t.Fatalf("no resource aliased %s", alias)
	return ""
}
