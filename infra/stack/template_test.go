package stack

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// The tests read the synthesized template as plain Go data and name
// resources by what they are (see alias), never by generated logical IDs.

func TestMain(m *testing.M) {
	code := m.Run()
	jsii.Close()
	os.Exit(code)
}

type template struct {
	Resources  map[string]resource
	Outputs    map[string]struct{ Value any }
	Parameters map[string]struct{ Default any }
	Rules      map[string]any
	alias      map[string]string // logical ID → role in the stack
	// defaults renders a parameter (and an element of a list one) as its
	// default value, for comparing a template with parameters to one
	// synthesized with those values.
	defaults bool
}

type resource struct {
	Type       string
	Condition  string
	Properties map[string]any
	Metadata   map[string]any
}

// fakeAsset stands in for `make build`'s dist/ directory.
func fakeAsset(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bootstrap"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// testProps is a full configuration: two clusters, named and prefixed groups.
func testProps(t testing.TB) Props {
	p := Defaults()
	p.AssetDir = fakeAsset(t)
	p.Clusters = []string{"prod", "staging"}
	p.ASGNames = []string{"workers"}
	p.ASGNamePrefix = "eks-"
	return p
}

// newStack synthesizes props into a fresh app; it fails the test on error.
func newStack(t testing.TB, p Props) awscdk.Stack {
	t.Helper()
	s, err := New(awscdk.NewApp(nil), "Test", p, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func synth(t testing.TB, p Props) template {
	t.Helper()
	return templateOf(t, newStack(t, p))
}

// templateOf synthesizes s.
func templateOf(t testing.TB, s awscdk.Stack) template {
	t.Helper()
	raw, err := json.Marshal(assertions.Template_FromStack(s, nil).ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	var tpl template
	if err := json.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	tpl.alias = aliases(tpl)
	return tpl
}

// aliases names resources by their part in the stack: queues are "Queue",
// "CordonQueue" (named …-cordon) or "DeadLetterQueue", the function's role
// "FunctionRole", anything else its type's last segment ("Rule",
// "LogGroup", "Function", "Role"); the rule that notifies of changes to
// the queues is "QueueControlAlarm".
func aliases(tpl template) map[string]string {
	a := map[string]string{}
	for id, r := range tpl.Resources {
		a[id] = r.Type[strings.LastIndex(r.Type, "::")+2:]
	}
	for id, r := range tpl.Resources {
		switch r.Type {
		case "AWS::SQS::Queue":
			if rp, ok := r.Properties["RedrivePolicy"].(map[string]any); ok {
				a[id] = "Queue"
				if name, _ := json.Marshal(r.Properties["QueueName"]); strings.Contains(string(name), cordonSuffix+`"`) {
					a[id] = "CordonQueue"
				}
				a[refID(rp["deadLetterTargetArn"])] = "DeadLetterQueue"
			}
		case "AWS::Lambda::Function":
			a[refID(r.Properties["Role"])] = "FunctionRole"
		case "AWS::Events::Rule":
			if d, _ := r.Properties["Description"].(string); strings.Contains(d, "QueueControlAlarm") {
				a[id] = "QueueControlAlarm"
			}
		}
	}
	return a
}

// refID returns the logical ID a Ref or Fn::GetAtt points at, or "".
func refID(v any) string {
	m, _ := v.(map[string]any)
	if id, ok := m["Ref"].(string); ok {
		return id
	}
	if ga, ok := m["Fn::GetAtt"].([]any); ok && len(ga) > 0 {
		id, _ := ga[0].(string)
		return id
	}
	return ""
}

// render flattens intrinsic functions into readable strings with aliases
// ({"Fn::GetAtt": ["Queue4A7E3555", "Arn"]} becomes "${Queue.Arn}"); a
// string stays itself, a list is joined with commas, anything else is JSON.
func (tpl template) render(v any) string {
	switch r := tpl.resolve(v).(type) {
	case string:
		return r
	case []any:
		var parts []string
		for _, e := range r {
			parts = append(parts, tpl.render(e))
		}
		return strings.Join(parts, ",")
	default:
		b, _ := json.Marshal(r)
		return string(b)
	}
}

// resolve replaces every intrinsic inside v by its rendered string.
func (tpl template) resolve(v any) any {
	switch v := v.(type) {
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = tpl.resolve(e)
		}
		return out
	case map[string]any:
		if id, ok := v["Ref"].(string); ok {
			if strings.HasPrefix(id, "AWS::") {
				return "${" + id + "}"
			}
			if a, ok := tpl.alias[id]; ok {
				return "${" + a + "}"
			}
			if p, ok := tpl.Parameters[id]; ok && tpl.defaults && p.Default != nil {
				return p.Default
			}
			return "${" + id + "}" // a parameter
		}
		if sel, ok := v["Fn::Select"].([]any); ok && len(sel) == 2 && tpl.defaults {
			ref, _ := sel[1].(map[string]any)
			p, ok := tpl.Parameters[fmt.Sprint(ref["Ref"])]
			i, err := strconv.Atoi(fmt.Sprint(sel[0]))
			if list := strings.Split(fmt.Sprint(p.Default), ","); ok && err == nil && i < len(list) {
				return list[i]
			}
		}
		if ga, ok := v["Fn::GetAtt"].([]any); ok && len(ga) == 2 {
			return fmt.Sprintf("${%s.%s}", tpl.alias[fmt.Sprint(ga[0])], ga[1])
		}
		if j, ok := v["Fn::Join"].([]any); ok && len(j) == 2 {
			var parts []string
			for _, e := range asList(j[1]) {
				parts = append(parts, tpl.render(e))
			}
			if _, ok := j[1].(map[string]any); ok { // a list parameter
				return strings.ReplaceAll(tpl.render(j[1]), ",", fmt.Sprint(j[0]))
			}
			return strings.Join(parts, fmt.Sprint(j[0]))
		}
		out := map[string]any{}
		for k, e := range v {
			out[k] = tpl.resolve(e)
		}
		return out
	}
	return v
}

// ofType returns the resources of one type, in logical-ID order; of
// AWS::Events::Rule, those feeding the queue (not QueueControlAlarm).
func (tpl template) ofType(typ string) []resource {
	var ids []string
	for id, r := range tpl.Resources {
		if r.Type == typ && tpl.alias[id] != "QueueControlAlarm" {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var out []resource
	for _, id := range ids {
		out = append(out, tpl.Resources[id])
	}
	return out
}

// byAlias returns the single resource with that alias.
func (tpl template) byAlias(t testing.TB, alias string) resource {
	t.Helper()
	var found []resource
	for id, r := range tpl.Resources {
		if tpl.alias[id] == alias {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("template has %d resources aliased %q, want 1", len(found), alias)
	}
	return found[0]
}

// strs returns a JSON list (or single string) as []string.
func strs(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			s, _ := e.(string)
			out = append(out, s)
		}
		return out
	}
	return nil
}

// number reads a JSON number that CloudFormation may also carry as a string.
func number(v any) float64 {
	switch v := v.(type) {
	case float64:
		return v
	case string:
		var f float64
		fmt.Sscan(v, &f)
		return f
	}
	return -1
}
