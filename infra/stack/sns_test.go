package stack

import (
	"slices"
	"strings"
	"testing"
)

// TestSNSTopicsWired (issue 25, item 6): the `sns` shape the function reads
// is wireable from the stack: with snsTopicArns the queue subscribes to
// each topic (envelopes kept), SNS may send for those topics only (its
// Allow and the senders' Deny both name them), and DRAINPIPE_ACCEPT gains
// sns; without it, none of that.
func TestSNSTopicsWired(t *testing.T) {
	const topic = "arn:aws:sns:eu-west-1:123456789012:asg-lifecycle"
	p := testProps(t)
	p.SNSTopicARNs = []string{topic}
	tpl := synth(t, p)
	subs := tpl.ofType("AWS::SNS::Subscription")
	if len(subs) != 1 {
		t.Fatalf("%d subscriptions, want 1", len(subs))
	}
	sub := subs[0].Properties
	if sub["Protocol"] != "sqs" || tpl.render(sub["Endpoint"]) != "${Queue.Arn}" || sub["TopicArn"] != topic || sub["RawMessageDelivery"] == true {
		t.Errorf("subscription %v, want the queue on %s with envelopes", tpl.render(sub), topic)
	}
	var allowed bool
	for _, s := range tpl.statements() {
		if s.Where == "QueuePolicy(${Queue})" && s.Effect == "Allow" && strings.Contains(s.Principal, "sns.amazonaws.com") {
			allowed = strings.Contains(s.Condition, topic)
		}
	}
	if !allowed {
		t.Error("SNS is not allowed to send to the queue for the topic")
	}
	if got := sendDeny(t, tpl, "Queue")["ArnNotEquals"]["aws:SourceArn"]; !slices.Contains(got, topic) {
		t.Errorf("the senders' Deny exempts sources %v, want the topic among them", got)
	}
	vars := tpl.byAlias(t, "Function").Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
	if got := vars["DRAINPIPE_ACCEPT"]; got != "eventbridge,sns" {
		t.Errorf("DRAINPIPE_ACCEPT = %v, want eventbridge,sns", got)
	}
	// The function refuses notifications through any other topic.
	if got := vars["DRAINPIPE_SNS_TOPICS"]; got != topic {
		t.Errorf("DRAINPIPE_SNS_TOPICS = %v, want %s", got, topic)
	}
	checkValidate(t, func() Props { p := testProps(t); p.SNSTopicARNs = []string{topic + ".fifo"}; return p }(), "snsTopicArns")
	if n := len(synth(t, testProps(t)).ofType("AWS::SNS::Subscription")); n != 0 {
		t.Errorf("%d subscriptions without snsTopicArns, want none", n)
	}
}
