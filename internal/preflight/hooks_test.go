package preflight

import (
	"strings"
	"testing"
)

func TestJudgeHooksRefusesABadStack(t *testing.T) {
	if _, err := JudgeHooks(Stack{Clusters: []string{" "}}, nil, nil); err == nil {
		t.Error("a stack with an empty cluster name was judged")
	}
	if _, err := JudgeHooks(Stack{Clusters: []string{"prod"}, RequiredTag: "=x"}, nil, nil); err == nil {
		t.Error("a stack with an empty required tag key was judged")
	}
}

// A named group whose only hooks are of other transitions is a gap, named
// with the hook to add; a group of the cluster the stack does not name is
// reported without one, as fine.
func TestGroupWithoutATerminateHook(t *testing.T) {
	tagged := map[string]string{"kubernetes.io/cluster/prod": "owned"}
	groups := []ASG{
		{Name: "prod-a", Tags: tagged, Hooks: []Hook{{Name: "warm", Transition: "autoscaling:EC2_INSTANCE_LAUNCHING_WARM"}}},
		{Name: "prod-b", Tags: tagged, Hooks: []Hook{{Name: "drainpipe-launch", Transition: Launching}}},
		{Name: "other", Tags: tagged},
	}
	for _, tt := range []struct {
		stack Stack
		hook  string
	}{
		{Stack{Clusters: []string{"prod"}, ASGNames: []string{"prod-a", "prod-b"}}, "drainpipe"},
		{Stack{Clusters: []string{"prod"}, ASGNames: []string{"prod-a", "prod-b"}, HookNames: []string{"term", "x"}}, "term"},
	} {
		rows, err := JudgeHooks(tt.stack, groups, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]HookRow{}
		for _, r := range rows {
			got[r.Group+"/"+r.Hook] = r
		}
		if len(rows) != 4 {
			t.Errorf("rows %+v, want 4 (no row for the warm pool's hook)", rows)
		}
		for _, g := range []string{"prod-a/", "prod-b/"} {
			r := got[g]
			if r.Status != Gap || r.Verdict != NoHook || !strings.Contains(r.Reason, "--lifecycle-hook-name "+tt.hook+")") {
				t.Errorf("%s = %+v, want a gap naming hook %s", g, r, tt.hook)
			}
		}
		if r := got["prod-b/drainpipe-launch"]; r.Transition != Launching || r.Status != map[bool]Status{true: OK, false: Gap}[tt.hook == "drainpipe"] {
			t.Errorf("launch hook row %+v", r)
		}
		if r := got["other/"]; r.Status != OK || r.Verdict != NoHook || !strings.Contains(r.Reason, "state change") ||
			len(r.Clusters) != 1 || r.Clusters[0] != "prod" {
			t.Errorf("unnamed group row %+v", r)
		}
	}
}

// A group named by the stack but without cluster tags has an empty (not
// null) cluster list.
func TestUntaggedGroupRow(t *testing.T) {
	rows, err := JudgeHooks(Stack{Clusters: []string{"prod"}, ASGNames: []string{"g"}}, []ASG{{Name: "g"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Clusters == nil || len(rows[0].Clusters) != 0 {
		t.Errorf("rows %+v, want one with an empty cluster list", rows)
	}
}

func TestGroupSelection(t *testing.T) {
	for _, tt := range []struct {
		s    Stack
		want string
	}{
		{Stack{}, "neither is set: the stack has no lifecycle rule"},
		{Stack{ASGNames: []string{"a", "b"}}, "asgNames=a,b"},
		{Stack{ASGNamePrefix: "p-"}, "asgNamePrefix=p-"},
		{Stack{ASGNames: []string{"a"}, ASGNamePrefix: "p-"}, "asgNames=a; asgNamePrefix=p-"},
	} {
		if got := groupSelection(tt.s); got != tt.want {
			t.Errorf("groupSelection(%+v) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func TestServesGroup(t *testing.T) {
	s := Stack{ASGNames: []string{"exact"}, ASGNamePrefix: "p-"}
	for name, want := range map[string]bool{"exact": true, "p-1": true, "p-": true, "exact2": false, "x-p-1": false} {
		if got := s.ServesGroup(name); got != want {
			t.Errorf("ServesGroup(%q) = %v, want %v", name, got, want)
		}
	}
	if (Stack{}).ServesGroup("any") {
		t.Error("a stack without names or prefix serves a group")
	}
}

func TestJudgeHookReasons(t *testing.T) {
	s := Stack{Clusters: []string{"prod"}, ASGNames: []string{"g"}, QueueARN: queue}
	for _, tt := range []struct {
		h       Hook
		status  Status
		verdict string
		reason  string
	}{
		{Hook{Name: "h", Transition: Launching, DefaultResult: "ABANDON"}, OK, Served, "ABANDON terminates"},
		{Hook{Name: "h", Transition: Launching, DefaultResult: "CONTINUE"}, OK, Served, "by the stack's rule"},
		{Hook{Name: "h", Transition: Terminating, DefaultResult: "ABANDON"}, OK, Served, "by the stack's rule"},
	} {
		status, verdict, reason := judgeHook(s, "g", tt.h, "", nil)
		if status != tt.status || verdict != tt.verdict || !strings.Contains(reason, tt.reason) {
			t.Errorf("judgeHook(%+v) = %s %s %q, want %s %s %q", tt.h, status, verdict, reason, tt.status, tt.verdict, tt.reason)
		}
		if tt.reason == "by the stack's rule" && reason != "by the stack's rule" {
			t.Errorf("judgeHook(%+v) reason %q, want the plain one", tt.h, reason)
		}
	}
}

func TestCounts(t *testing.T) {
	r := Report{
		Hooks:  []HookRow{{Status: Gap}, {Status: OK}, {Status: Unknown}},
		Checks: []Check{{Status: Gap}, {Status: Gap}, {Status: OK}, {Status: Unknown}},
	}
	if gaps, unknown := r.Counts(); gaps != 3 || unknown != 2 {
		t.Errorf("Counts = %d gaps, %d unknown; want 3, 2", gaps, unknown)
	}
}
