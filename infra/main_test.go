package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"
)

func TestMain(m *testing.M) {
	code := m.Run()
	jsii.Close()
	os.Exit(code)
}

// TestRun drives the app as the CDK CLI does: from infra/ under a root with
// cdk.json and a relative CDK_OUTDIR.
func TestRun(t *testing.T) {
	root := t.TempDir()
	for _, dir := range []string{"infra", "dist", "internal/version"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "internal", "version", "VERSION"), []byte("9.8.7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "cdk.json"), []byte(`{"app": "go run -C infra ."}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(root, "infra"))
	t.Setenv("CDK_OUTDIR", "cdk.out")
	ctx := map[string]any{"clusters": []any{"prod"}, "stackName": "Drainpipe-test"}

	err := run(ctx)
	if err == nil || !strings.Contains(err.Error(), "run `make build` first") || strings.Contains(err.Error(), "clusters") {
		t.Fatalf("run without dist/bootstrap: %v, want only an error asking for make build", err)
	}

	if err := os.WriteFile(filepath.Join(root, "dist", "bootstrap"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx); err != nil {
		t.Fatalf("run: %v", err)
	}
	tmpl, err := os.ReadFile(filepath.Join(root, "cdk.out", "Drainpipe-test.template.json"))
	if err != nil {
		t.Fatalf("template not written under the root's cdk.out: %v", err)
	}
	// The resources carry the version of internal/version/VERSION.
	if !regexp.MustCompile(`"Key":\s*"drainpipe:version",\s*"Value":\s*"9\.8\.7"`).Match(tmpl) {
		t.Error("template lacks the tag drainpipe:version = 9.8.7")
	}
}

// TestRunListsEveryProblem: a wrong context type, a bad stack name, a bad
// env value and maxClusters without the standalone template come back
// together, as an error (not a panic).
func TestRunListsEveryProblem(t *testing.T) {
	root := t.TempDir()
	for _, dir := range []string{"infra", "dist"} {
		if err := os.Mkdir(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "cdk.json"), []byte(`{}`), 0o644)
	os.WriteFile(filepath.Join(root, "dist", "bootstrap"), []byte("#!/bin/sh\n"), 0o755)
	t.Chdir(filepath.Join(root, "infra"))
	t.Setenv("CDK_OUTDIR", "cdk.out")
	err := run(map[string]any{"clusters": []any{"prod"}, "stackName": "bad name!", "batchSize": true,
		"env": map[string]any{"DRAINPIPE_TAINT_EFFECT": "NoExecute"}, "maxClusters": "4"})
	for _, want := range []string{"stackName", "context batchSize", "DRAINPIPE_TAINT_EFFECT", "maxClusters: only for the standalone template"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("run: %v, want it to mention %s", err, want)
		}
	}
}
