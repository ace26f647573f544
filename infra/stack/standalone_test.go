package stack

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/google/go-cmp/cmp"
)

// TestStandaloneMatchesStack: the standalone template has the CDK stack's
// resources and policies for the same settings, and needs no bootstrap.
func TestStandaloneMatchesStack(t *testing.T) {
	p := testProps(t)
	p.ASGNotificationRole = true
	s, err := NewStandalone(awscdk.NewApp(nil), "Standalone", p)
	if err != nil {
		t.Fatalf("NewStandalone: %v", err)
	}
	raw, err := json.Marshal(assertions.Template_FromStack(s, nil).ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	var got template
	var extra struct {
		Parameters map[string]any
		Rules      map[string]any
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(raw, &extra)
	got.alias = aliases(got)
	want := synth(t, p)

	types := func(tpl template) []string {
		var out []string
		for _, r := range tpl.Resources {
			out = append(out, r.Type)
		}
		slices.Sort(out)
		return out
	}
	if diff := cmp.Diff(types(want), types(got)); diff != "" {
		t.Errorf("resource types (-stack +standalone):\n%s", diff)
	}
	stmts := func(tpl template) []statement {
		out := tpl.statements()
		slices.SortFunc(out, func(a, b statement) int {
			x, _ := json.Marshal(a)
			y, _ := json.Marshal(b)
			return slices.Compare(x, y)
		})
		return out
	}
	if diff := cmp.Diff(stmts(want), stmts(got)); diff != "" {
		t.Errorf("policy statements (-stack +standalone):\n%s", diff)
	}
	var params []string
	for k := range extra.Parameters {
		params = append(params, k)
	}
	slices.Sort(params)
	if diff := cmp.Diff([]string{"CodeBucket", "CodeKey"}, params); diff != "" {
		t.Errorf("parameters (-want +got):\n%s", diff)
	}
	if len(extra.Rules) > 0 {
		t.Errorf("template has Rules %v (the bootstrap version check)", extra.Rules)
	}
	code := got.byAlias(t, "Function").Properties["Code"]
	if r := got.render(code); r != `{"S3Bucket":"${CodeBucket}","S3Key":"${CodeKey}"}` {
		t.Errorf("function code = %s, want the CodeBucket and CodeKey parameters", r)
	}
}
