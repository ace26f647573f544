package stack

import (
	"strings"
	"testing"
)

// TestConsumersGuarded: on both queues, receive/delete/purge/hide are
// denied to every principal but the function's role and the operator
// roles, and the operators may redrive the dead-letter queue.
func TestConsumersGuarded(t *testing.T) {
	const operator = "arn:aws:iam::123456789012:role/oncall"
	p := testProps(t)
	p.OperatorRoleARNs = []string{operator}
	tpl := synth(t, p)
	denies, redrive := map[string]bool{}, map[string]bool{}
	for _, s := range tpl.statements() {
		if !strings.HasPrefix(s.Where, "QueuePolicy") {
			continue
		}
		switch {
		case s.Effect == "Deny" && strings.Join(s.Actions, ",") == "sqs:ChangeMessageVisibility,sqs:DeleteMessage,sqs:PurgeQueue,sqs:ReceiveMessage":
			want := `{"ArnNotEquals":{"aws:PrincipalArn":["${FunctionRole.Arn}","` + operator + `"]}}`
			if s.Principal != `{"AWS":"*"}` || s.Condition != want {
				t.Errorf("%s: deny to %s unless %s, want to everyone unless %s", s.Where, s.Principal, s.Condition, want)
			}
			denies[strings.Join(s.Resources, ",")] = true
		case s.Effect == "Allow" && strings.Contains(s.Principal, operator):
			redrive[strings.Join(s.Actions, ",")] = true
		}
	}
	for _, q := range []string{"${Queue.Arn}", "${DeadLetterQueue.Arn}"} {
		if !denies[q] {
			t.Errorf("no consume denial on %s (denials on %v)", q, denies)
		}
	}
	for _, want := range []string{
		"sqs:CancelMessageMoveTask,sqs:ChangeMessageVisibility,sqs:DeleteMessage,sqs:GetQueueAttributes," +
			"sqs:ListDeadLetterSourceQueues,sqs:ListMessageMoveTasks,sqs:ReceiveMessage,sqs:StartMessageMoveTask",
		"sqs:GetQueueAttributes,sqs:SendMessage",
	} {
		if !redrive[want] {
			t.Errorf("operators not allowed %s (allowed: %v)", want, redrive)
		}
	}
}
