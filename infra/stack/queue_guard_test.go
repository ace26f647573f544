package stack

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConsumersGuarded: on every queue, receive/delete/purge/hide are
// denied to every principal but the function's role and the operator
// roles, and the operators may redrive the dead-letter queue, into the
// work queue or, for its copies, the cordon queue.
func TestConsumersGuarded(t *testing.T) {
	const operator = "arn:aws:iam::123456789012:role/oncall"
	p := testProps(t)
	p.OperatorRoleARNs = []string{operator}
	tpl := synth(t, p)
	denies, redrive := map[string]bool{}, map[string][]string{}
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
			redrive[strings.Join(s.Actions, ",")] = append(redrive[strings.Join(s.Actions, ",")], strings.Join(s.Resources, ","))
		}
	}
	for _, q := range []string{"${Queue.Arn}", "${DeadLetterQueue.Arn}", "${CordonQueue.Arn}"} {
		if !denies[q] {
			t.Errorf("no consume denial on %s (denials on %v)", q, denies)
		}
	}
	want := map[string][]string{
		"sqs:CancelMessageMoveTask,sqs:ChangeMessageVisibility,sqs:DeleteMessage,sqs:GetQueueAttributes," +
			"sqs:ListDeadLetterSourceQueues,sqs:ListMessageMoveTasks,sqs:ReceiveMessage,sqs:StartMessageMoveTask": {"${DeadLetterQueue.Arn}"},
		"sqs:GetQueueAttributes,sqs:SendMessage": {"${CordonQueue.Arn}", "${Queue.Arn}"},
	}
	for _, on := range redrive {
		slices.Sort(on)
	}
	if diff := cmp.Diff(want, redrive); diff != "" {
		t.Errorf("operators' Allows by actions (-want +got):\n%s", diff)
	}
}
