package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// deployCommands reads docs/deploy.md's deploy block: the CTX line and the
// cdk commands, as an operator would copy them.
func deployCommands(t *testing.T, root string) (ctx []string, cdk [][]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "CTX="); ok {
			ctx = strings.Fields(strings.Trim(v, `'"`))
		}
		if strings.HasPrefix(line, "npx cdk ") {
			cdk = append(cdk, strings.Fields(line))
		}
	}
	if len(ctx) == 0 || len(cdk) < 2 {
		t.Fatalf("docs/deploy.md: no CTX= line or fewer than two npx cdk commands (%v, %v)", ctx, cdk)
	}
	return ctx, cdk
}

// The documented deploy commands work as written up to the point where AWS
// credentials are needed: `cdk bootstrap` synthesizes the app first, which
// stopped with "clusters: at least one EKS cluster name is needed" when the
// docs gave it no context; `cdk deploy`'s synth must succeed.
func TestDocumentedDeployCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs npm ci and the CDK CLI")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "dist", "bootstrap")); err != nil {
		t.Fatalf("dist/bootstrap: %v (run make build, the first documented command)", err)
	}
	ctxArgs, cmds := deployCommands(t, root)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	run := func(name string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = root
		// No AWS credentials anywhere: the commands must get as far as needing them.
		cmd.Env = []string{"AWS_REGION=us-west-2", "AWS_EC2_METADATA_DISABLED=true",
			"AWS_CONFIG_FILE=/nonexistent", "AWS_SHARED_CREDENTIALS_FILE=/nonexistent", "CDK_DISABLE_VERSION_CHECK=1"}
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "AWS_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", ".bin", "cdk")); err != nil {
		if out, err := run("npm", "ci", "--no-audit", "--no-fund"); err != nil {
			t.Fatalf("npm ci: %v\n%s", err, out)
		}
	}
	for _, c := range cmds {
		args := append([]string{"--no-install", "cdk"}, c[2:]...)
		for i, a := range args {
			if a == "$CTX" {
				args = append(args[:i:i], append(ctxArgs, args[i+1:]...)...)
				break
			}
		}
		switch c[2] {
		case "deploy": // its synth step, which needs no credentials
			args[2] = "synth"
			args = append(args, "--quiet", "--output", t.TempDir())
			if out, err := run("npx", args...); err != nil {
				t.Errorf("%s (as synth): %v\n%s", strings.Join(c, " "), err, out)
			}
		case "bootstrap":
			args = append(args, "--output", t.TempDir())
			out, err := run("npx", args...)
			if err == nil {
				t.Fatalf("%s succeeded without credentials?\n%s", strings.Join(c, " "), out)
			}
			if strings.Contains(out, "drainpipe infra:") || strings.Contains(out, "at least one EKS cluster") {
				t.Errorf("%s: the app's synth failed before AWS was needed:\n%s", strings.Join(c, " "), out)
			}
		}
	}
}
