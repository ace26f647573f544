package preflight

import (
	"slices"
	"strings"
	"testing"
)

func TestPermissionString(t *testing.T) {
	for p, want := range map[Permission]string{
		{Verb: "get", Resource: "nodes"}:                                                              "get nodes",
		{Verb: "create", Resource: "pods", Subresource: "eviction"}:                                   "create pods/eviction",
		{Verb: "list", APIGroup: "policy", Resource: "poddisruptionbudgets"}:                          "list poddisruptionbudgets.policy",
		{Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "drainpipe"}: "update leases.coordination.k8s.io in drainpipe",
	} {
		if got := p.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", p, got, want)
		}
	}
}

func TestJudgeRBACDetail(t *testing.T) {
	c := JudgeRBAC("prod", nil)
	if c.Cluster != "prod" || c.What != "rbac" || c.Missing != nil ||
		c.Detail != "group drainpipe may do all 17 things deploy/rbac.yaml grants" {
		t.Errorf("no denial: %+v", c)
	}
	c = JudgeRBAC("prod", []Permission{{Verb: "get", Resource: "nodes"}, {Verb: "list", Resource: "pods"}})
	if c.Detail != "group drainpipe may not get nodes, list pods: kubectl apply -f deploy/rbac.yaml" {
		t.Errorf("denials: %+v", c)
	}
}

func TestJudgeFlowControlFindings(t *testing.T) {
	levels := []string{"drainpipe", "drainpipe-nodes"}
	full := func() map[string]FlowSchema {
		return map[string]FlowSchema{"drainpipe": {"drainpipe", "drainpipe", []string{"x", Group}},
			"drainpipe-nodes": {"drainpipe-nodes", "drainpipe-nodes", []string{Group}}}
	}
	c := JudgeFlowControl("prod", full(), levels)
	if c.Status != OK || c.Missing != nil || c.Detail != "FlowSchemas drainpipe, drainpipe-nodes and their priority levels are in place" {
		t.Errorf("all there: %+v", c)
	}
	wrongLevel, wrongGroup := full(), full()
	wrongLevel["drainpipe"] = FlowSchema{"drainpipe", "global-default", []string{Group}}
	wrongGroup["drainpipe-nodes"] = FlowSchema{"drainpipe-nodes", "drainpipe-nodes", []string{"system:nodes"}}
	for name, schemas := range map[string]map[string]FlowSchema{"level": wrongLevel, "group": wrongGroup} {
		c := JudgeFlowControl("prod", schemas, levels)
		if c.Status != Gap || len(c.Missing) != 1 || !strings.HasPrefix(c.Missing[0], "FlowSchema drainpipe") ||
			!strings.Contains(c.Missing[0], "want level") {
			t.Errorf("wrong %s: %+v", name, c)
		}
	}
	c = JudgeFlowControl("prod", wrongLevel, nil)
	want := []string{"PriorityLevelConfiguration drainpipe", "PriorityLevelConfiguration drainpipe-nodes",
		`FlowSchema drainpipe (level "global-default", groups [drainpipe]; want level "drainpipe", group drainpipe)`}
	if !slices.Equal(c.Missing, want) || !strings.HasPrefix(c.Detail, "not as deploy/flowcontrol.yaml has it: "+strings.Join(want, "; ")+": kubectl apply") {
		t.Errorf("levels missing, one schema wrong: %+v\nwant missing %q", c, want)
	}
	c = JudgeFlowControl("prod", nil, levels)
	if !slices.Equal(c.Missing, []string{"FlowSchema drainpipe", "FlowSchema drainpipe-nodes"}) {
		t.Errorf("schemas missing: %+v", c)
	}
}

func TestJudgeAccessEntryDetail(t *testing.T) {
	const role = "arn:aws:iam::1:role/r"
	c := JudgeAccessEntry("prod", role, AccessEntry{Found: true, Groups: []string{"other"}})
	if c.Cluster != "prod" || c.What != "access entry" || !slices.Equal(c.Missing, []string{"group drainpipe"}) ||
		c.Detail != role+" has an access entry with groups [other], without drainpipe: its requests are refused" {
		t.Errorf("entry without the group: %+v", c)
	}
	if c := JudgeAccessEntry("prod", role, AccessEntry{}); !slices.Equal(c.Missing, []string{"access entry"}) {
		t.Errorf("no entry: %+v", c)
	}
	if c := JudgeAccessEntry("prod", role, AccessEntry{AuthMode: "CONFIG_MAP"}); c.Missing != nil {
		t.Errorf("aws-auth cluster: %+v, want nothing listed missing", c)
	}
}

func TestJudgeTopicDetail(t *testing.T) {
	const topic = "arn:aws:sns:us-west-2:1:t"
	c := JudgeTopic(topic, []Subscription{{Protocol: "email", Endpoint: "a@b.c"}, {Protocol: "https", Endpoint: "h"},
		{Protocol: "sqs", Endpoint: "q", Pending: true}})
	if c.Status != OK || c.Detail != topic+" has 2 confirmed subscription(s) (email, https)" {
		t.Errorf("confirmed: %+v", c)
	}
	c = JudgeTopic(topic, []Subscription{{Protocol: "email", Endpoint: "a@b.c", Pending: true}})
	if !strings.Contains(c.Detail, "only unconfirmed subscriptions (email:a@b.c)") {
		t.Errorf("pending: %+v", c)
	}
	if c := JudgeTopic(topic, nil); !strings.Contains(c.Detail, "no subscriber") || c.What != "alarm topic" {
		t.Errorf("none: %+v", c)
	}
}

// One schema missing and the other wrong is a gap of both.
func TestJudgeFlowControlMissingAndWrong(t *testing.T) {
	schemas := map[string]FlowSchema{"drainpipe": {"drainpipe", "global-default", []string{Group}}}
	c := JudgeFlowControl("prod", schemas, []string{"drainpipe", "drainpipe-nodes"})
	if c.Status != Gap || len(c.Missing) != 2 || c.Missing[0] != "FlowSchema drainpipe-nodes" {
		t.Errorf("one missing, one wrong: %+v", c)
	}
}
