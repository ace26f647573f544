package preflight

import (
	"strings"
	"testing"
)

// Why a group is not served names the stack's selection as set.
func TestGroupSelectionText(t *testing.T) {
	for _, c := range []struct {
		s    Stack
		want string
	}{
		{Stack{ASGNames: []string{"a", "b"}}, "asgNames=a,b"},
		{Stack{ASGNamePrefix: "prod-"}, "asgNamePrefix=prod-"},
		{Stack{ASGNames: []string{"a"}, ASGNamePrefix: "prod-"}, "asgNames=a; asgNamePrefix=prod-"},
		{Stack{}, "neither is set: the stack has no lifecycle rule"},
	} {
		if got := groupSelection(c.s); got != c.want {
			t.Errorf("%+v: %q, want %q", c.s, got, c.want)
		}
	}
	if firstOr(nil, "drainpipe") != "drainpipe" || firstOr([]string{"x", "y"}, "drainpipe") != "x" {
		t.Error("firstOr")
	}
}

// A served launch hook whose default result is ABANDON is said to
// terminate the instance when unanswered; a group without cluster tags
// lists none, not null.
func TestJudgeHooksLaunchAbandonAndNoTags(t *testing.T) {
	s := Stack{Clusters: []string{"prod"}, ASGNames: []string{"g"}, HookNames: []string{"launch", "term"}}
	rows, err := JudgeHooks(s, []ASG{{Name: "g", Hooks: []Hook{
		{Name: "launch", Transition: Launching, DefaultResult: "ABANDON"},
		{Name: "term", Transition: Terminating, DefaultResult: "ABANDON"}}}}, nil)
	if err != nil || len(rows) != 2 {
		t.Fatalf("%+v, %v", rows, err)
	}
	for _, r := range rows {
		if r.Clusters == nil {
			t.Errorf("%s: clusters nil", r.Hook)
		}
		if abandon := strings.Contains(r.Reason, "ABANDON"); abandon != (r.Hook == "launch") {
			t.Errorf("%s: reason %q", r.Hook, r.Reason)
		}
	}
}

// The alarm topic: confirmed, only pending, or no subscriber.
func TestJudgeTopic(t *testing.T) {
	for _, c := range []struct {
		subs   []Subscription
		status Status
		want   string
	}{
		{[]Subscription{{Protocol: "email", Endpoint: "a@example.com", Pending: true}, {Protocol: "https"}}, OK, "1 confirmed"},
		{[]Subscription{{Protocol: "email", Endpoint: "a@example.com", Pending: true}}, Gap, "only unconfirmed subscriptions (email:a@example.com)"},
		{nil, Gap, "has no subscriber"},
	} {
		if got := JudgeTopic("alarms", c.subs); got.Status != c.status || !strings.Contains(got.Detail, c.want) {
			t.Errorf("%+v: %+v, want %s %q", c.subs, got, c.status, c.want)
		}
	}
}

// A missing schema and a wrong one together are no success.
func TestJudgeFlowControlBothSchemas(t *testing.T) {
	schemas := map[string]FlowSchema{"drainpipe": {Name: "drainpipe", PriorityLevel: "other", Groups: []string{Group}}}
	if c := JudgeFlowControl("prod", schemas, []string{"drainpipe", "drainpipe-nodes"}); c.Status == OK {
		t.Errorf("one schema missing, one wrong: %+v", c)
	}
}
