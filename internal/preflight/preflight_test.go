package preflight

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
)

const queue = "arn:aws:sqs:us-west-2:111122223333:Drainpipe"

// The migration's gaps: NTH's hook name, a group the stack does not
// name, a hook still notifying NTH's queue, a named group without a hook;
// and what is served.
func TestJudgeHooks(t *testing.T) {
	s := Stack{Clusters: []string{"prod"}, ASGNamePrefix: "prod-", HookNames: []string{"drainpipe", "drainpipe-launch"}, QueueARN: queue}
	tagged := map[string]string{"kubernetes.io/cluster/prod": "owned"}
	groups := []ASG{
		{Name: "prod-a", Tags: tagged, Hooks: []Hook{{Name: "drainpipe", Transition: Terminating},
			{Name: "drainpipe-launch", Transition: Launching, Target: queue}}},
		{Name: "prod-nth", Tags: tagged, Hooks: []Hook{{Name: "my-k8s-term-hook", Transition: Terminating}}},
		{Name: "legacy", Tags: map[string]string{"eks:cluster-name": "prod"}, Hooks: []Hook{{Name: "drainpipe", Transition: Terminating}}},
		{Name: "prod-b", Tags: tagged, Hooks: []Hook{{Name: "drainpipe", Transition: Terminating, Target: "arn:aws:sqs:us-west-2:111122223333:nth"}}},
		{Name: "prod-empty", Tags: tagged},
		{Name: "mng", Tags: tagged, Hooks: []Hook{{Name: "Terminate-LC-Hook", Transition: Terminating}}},
		{Name: "other-cluster", Tags: map[string]string{"eks:cluster-name": "dev"}, Hooks: []Hook{{Name: "drainpipe", Transition: Terminating}}},
	}
	rows, err := JudgeHooks(s, groups, []string{"Terminate-LC-Hook"})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		status         Status
		verdict, cause string
	}
	wants := map[string]want{
		"prod-a/drainpipe":          {OK, Served, "rule"},
		"prod-a/drainpipe-launch":   {OK, Served, "twice"},
		"prod-nth/my-k8s-term-hook": {Gap, NotServed, "lifecycleHookNames=drainpipe,drainpipe-launch,my-k8s-term-hook"},
		"legacy/drainpipe":          {Gap, NotServed, "asgNamePrefix=prod-"},
		"prod-b/drainpipe":          {Gap, NotServed, "arn:aws:sqs:us-west-2:111122223333:nth"},
		"prod-empty/":               {Gap, NoHook, "put-lifecycle-hook"},
		"mng/Terminate-LC-Hook":     {OK, Owner, "--others"},
	}
	got := map[string]HookRow{}
	for _, r := range rows {
		got[r.Group+"/"+r.Hook] = r
	}
	for key, w := range wants {
		r, ok := got[key]
		if !ok || r.Status != w.status || r.Verdict != w.verdict || !strings.Contains(r.Reason, w.cause) {
			t.Errorf("%s = %+v (found %v), want %s %s with %q", key, r, ok, w.status, w.verdict, w.cause)
		}
	}
	if len(got) != 7 {
		t.Errorf("%d rows, want 7: %+v", len(got), rows)
	}
}

// A required tag the group lacks makes its hooks unknown, another
// cluster's tag a gap; an
// unknown queue makes a targeted hook unknown, not ok.
func TestJudgeHooksTagsAndUnknownQueue(t *testing.T) {
	s := Stack{Clusters: []string{"prod"}, ASGNames: []string{"w"}, RequiredTag: "drainpipe=on"}
	g := ASG{Name: "w", Tags: map[string]string{"eks:cluster-name": "prod"}, Hooks: []Hook{{Name: "x", Transition: Terminating, Target: queue}}}
	rows, err := JudgeHooks(s, []ASG{g}, nil)
	if err != nil || len(rows) != 1 || rows[0].Status != Unknown || !strings.Contains(rows[0].Reason, "missing-required-tag") {
		t.Fatalf("rows %+v, %v; want unknown for the required tag (the launch template may set it)", rows, err)
	}
	foreign := ASG{Name: "w", Tags: map[string]string{"eks:cluster-name": "dev"}, Hooks: g.Hooks}
	if rows, _ := JudgeHooks(Stack{Clusters: []string{"prod"}, ASGNames: []string{"w"}, QueueARN: queue}, []ASG{foreign}, nil); len(rows) != 1 ||
		rows[0].Status != Gap || !strings.Contains(rows[0].Reason, "another cluster") {
		t.Errorf("a named group of another cluster: %+v", rows)
	}
	s.RequiredTag = ""
	rows, _ = JudgeHooks(s, []ASG{g}, nil)
	if len(rows) != 1 || rows[0].Status != Unknown {
		t.Errorf("rows %+v; want unknown: the stack's queue is not known", rows)
	}
	if rep := (Report{Hooks: rows, Checks: []Check{{Status: Gap}, {Status: OK}}}); func() bool { g, u := rep.Counts(); return g != 1 || u != 1 }() {
		t.Errorf("Counts of %+v", rep)
	}
}

// decode reads every document of a manifest under deploy/.
func decode(t *testing.T, name string, each func(kind string, raw []byte)) {
	t.Helper()
	data, err := os.ReadFile("../../deploy/" + name)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatal(err)
		}
		var meta struct{ Kind string }
		if err := json.Unmarshal(raw, &meta); err != nil {
			t.Fatal(err)
		}
		each(meta.Kind, raw)
	}
}

// Permissions are exactly what deploy/rbac.yaml grants: a verb added to
// the manifest is checked, one dropped is not demanded.
func TestPermissionsMatchRBACManifest(t *testing.T) {
	var fromManifest []string
	decode(t, "rbac.yaml", func(kind string, raw []byte) {
		var rules []rbacv1.PolicyRule
		ns := ""
		switch kind {
		case "ClusterRole":
			var o rbacv1.ClusterRole
			_ = json.Unmarshal(raw, &o)
			rules = o.Rules
		case "Role":
			var o rbacv1.Role
			_ = json.Unmarshal(raw, &o)
			rules, ns = o.Rules, o.Namespace
		}
		for _, r := range rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					name, sub, _ := strings.Cut(res, "/")
					for _, v := range r.Verbs {
						fromManifest = append(fromManifest, Permission{Verb: v, APIGroup: g, Resource: name, Subresource: sub, Namespace: ns}.String())
					}
				}
			}
		}
	})
	var ours []string
	for _, p := range Permissions() {
		ours = append(ours, p.String())
	}
	slices.Sort(fromManifest)
	slices.Sort(ours)
	if !slices.Equal(slices.Compact(fromManifest), ours) {
		t.Errorf("Permissions() = %v\ndeploy/rbac.yaml grants %v", ours, fromManifest)
	}
}

// WantFlowSchemas are deploy/flowcontrol.yaml's schemas and levels.
func TestFlowSchemasMatchManifest(t *testing.T) {
	got := map[string]string{}
	decode(t, "flowcontrol.yaml", func(kind string, raw []byte) {
		if kind == "FlowSchema" {
			var fs flowcontrolv1.FlowSchema
			_ = json.Unmarshal(raw, &fs)
			got[fs.Name] = fs.Spec.PriorityLevelConfiguration.Name
		}
	})
	if want := WantFlowSchemas(); len(got) != len(want) || !func() bool {
		for k, v := range want {
			if got[k] != v {
				return false
			}
		}
		return true
	}() {
		t.Errorf("deploy/flowcontrol.yaml has %v, WantFlowSchemas %v", got, want)
	}
}

func TestJudgeClusterChecks(t *testing.T) {
	if c := JudgeRBAC("prod", nil); c.Status != OK {
		t.Errorf("no denial: %+v", c)
	}
	if c := JudgeRBAC("prod", []Permission{{Verb: "create", Resource: "pods", Subresource: "eviction"}}); c.Status != Gap ||
		!slices.Equal(c.Missing, []string{"create pods/eviction"}) {
		t.Errorf("denied eviction: %+v", c)
	}
	full := map[string]FlowSchema{"drainpipe": {"drainpipe", "drainpipe", []string{Group}},
		"drainpipe-nodes": {"drainpipe-nodes", "drainpipe-nodes", []string{Group}}}
	if c := JudgeFlowControl("prod", full, []string{"drainpipe", "drainpipe-nodes"}); c.Status != OK {
		t.Errorf("all there: %+v", c)
	}
	delete(full, "drainpipe-nodes")
	if c := JudgeFlowControl("prod", full, []string{"drainpipe"}); c.Status != Gap || len(c.Missing) != 2 {
		t.Errorf("schema and level missing: %+v", c)
	}
	for e, want := range map[*AccessEntry]Status{
		{Found: true, Groups: []string{Group}}: OK, {Found: true}: Gap, {AuthMode: "CONFIG_MAP"}: Unknown, {AuthMode: "API_AND_CONFIG_MAP"}: Unknown,
		{AuthMode: "API"}: Gap, {}: Gap,
	} {
		if c := JudgeAccessEntry("prod", "arn:aws:iam::1:role/r", *e); c.Status != want {
			t.Errorf("%+v: %+v, want %s", *e, c, want)
		}
	}
	for subs, want := range map[*[]Subscription]Status{
		{}: Gap, {{Protocol: "email", Endpoint: "a@b.c", Pending: true}}: Gap, {{Protocol: "email"}, {Protocol: "sqs", Pending: true}}: OK,
	} {
		if c := JudgeTopic("arn:aws:sns:us-west-2:1:t", *subs); c.Status != want {
			t.Errorf("%+v: %+v, want %s", *subs, c, want)
		}
	}
}
