package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// exampleDir is the construct's shipped example, a module of its own the
// way a platform team's CDK app is.
const exampleDir = "../examples/construct"

// TestModulesTidy: `go mod tidy` succeeds, changing nothing, in infra/ and
// in the example. It used to fail in both: jsii-runtime-go's tools.go
// imports golang.org/x/tools/cmd/godoc, which x/tools v0.37.0 and later no
// longer hold (it became module golang.org/x/tools/cmd/godoc), and the
// build needs x/tools v0.51.0. A module embedding the construct needs the
// same pin; docs/deploy.md says so.
func TestModulesTidy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	for _, dir := range []string{".", exampleDir} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, "go", "mod", "tidy", "-diff")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("go mod tidy -diff in %s: %v\n%s", dir, err, out)
		}
	}
}

// TestConstructExample builds the example as its own module and
// synthesizes it as the CDK CLI would (CDK_OUTDIR, CDK_CONTEXT_JSON): the
// team's stack holds Drainpipe's resources beside its own, wired together.
func TestConstructExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example and runs it under jsii")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "example")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	build.Dir = exampleDir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in %s: %v\n%s", exampleDir, err, out)
	}
	asset := filepath.Join(tmp, "dist")
	if err := os.MkdirAll(asset, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(asset, "bootstrap"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctxJSON, err := json.Marshal(map[string]string{"drainpipeAssetDir": asset})
	if err != nil {
		t.Fatal(err)
	}
	outdir := filepath.Join(tmp, "cdk.out")
	run := exec.CommandContext(ctx, bin)
	run.Dir = exampleDir
	run.Env = append(os.Environ(), "CDK_OUTDIR="+outdir, "CDK_CONTEXT_JSON="+string(ctxJSON))
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("synthesizing the example: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(filepath.Join(outdir, "Platform.template.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Resources map[string]struct {
			Type       string
			Properties map[string]any
		}
	}
	if err := json.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	var queueNamed, backlogPages bool
	for id, r := range tpl.Resources {
		count[r.Type]++
		if r.Type == "AWS::SQS::Queue" && r.Properties["QueueName"] == "Platform-Drainpipe-queue" {
			queueNamed = true
		}
		if r.Type == "AWS::CloudWatch::Alarm" && strings.HasPrefix(id, "DrainpipeBacklog") {
			b, _ := json.Marshal(r.Properties["AlarmActions"])
			backlogPages = strings.Contains(string(b), "Oncall")
		}
	}
	if !queueNamed {
		t.Error("no queue named Platform-Drainpipe-queue: the construct is not in the team's stack")
	}
	if !backlogPages {
		t.Error("the team's alarm on Drainpipe's queue does not notify the team's topic")
	}
	for typ, want := range map[string]int{"AWS::Lambda::Function": 1, "AWS::EKS::AccessEntry": 1, "AWS::SNS::Topic": 2, "AWS::SNS::Subscription": 1} {
		if count[typ] < want {
			t.Errorf("%d %s, want at least %d", count[typ], typ, want)
		}
	}
}
