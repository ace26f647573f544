package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// TestConfigCheckFile checks configurations from files as the function
// would at start: a valid one, and one with every kind of problem, all
// named at once.
func TestConfigCheckFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, body string
		want       int
		says       []string
	}{
		{"valid.json", `{"DRAINPIPE_CLUSTERS": "prod", "DRAINPIPE_DRY_RUN": "true", "AWS_LAMBDA_EXEC_WRAPPER": "x",
			"DRAINPIPE_WEBHOOK_TEMPLATE": "{\"text\": \"{{ .Reason }} on {{ .NodeName }}\"}"}`,
			exitOK, []string{"valid (3 DRAINPIPE_ settings; dry run true; clusters prod)"}},
		{"whole.json", `{"FunctionName": "f", "Environment": {"Variables": {"DRAINPIPE_CLUSTERS": "a,b"}}}`,
			exitOK, []string{"clusters a,b"}},
		{"bad.json", `{"DRAINPIPE_CLUSTERS": "prod", "DRAINPIPE_ACTION_SPOT": "bogus", "DRAINPIPE_TAINT_EFFECT": "NoExecute",
			"DRAINPIPE_DRYRUN": "true"}`,
			exitUsage, []string{"3 problems", "DRAINPIPE_ACTION_SPOT", "DRAINPIPE_TAINT_EFFECT", "DRAINPIPE_DRYRUN is not a Drainpipe setting (did you mean DRAINPIPE_DRY_RUN?)"}},
		{"number.json", `{"DRAINPIPE_CLUSTERS": "prod", "DRAINPIPE_KUBE_QPS": 50}`,
			exitUsage, []string{"not strings", "DRAINPIPE_KUBE_QPS"}},
	} {
		code, out, stderr := runCLI(t, nil, "", "config", "check", write(tc.name, tc.body))
		if code != tc.want {
			t.Errorf("%s: exit %d, want %d\n%s%s", tc.name, code, tc.want, out, stderr)
		}
		for _, s := range tc.says {
			if !strings.Contains(out+stderr, s) {
				t.Errorf("%s: output does not say %q:\n%s%s", tc.name, s, out, stderr)
			}
		}
	}
	if code, out, _ := runCLI(t, nil, `{"DRAINPIPE_CLUSTERS": "prod"}`, "config", "check", "-"); code != exitOK {
		t.Errorf("config check -: exit %d\n%s", code, out)
	}
	if code, _, stderr := runCLI(t, nil, "", "config", "check"); code != exitUsage || !strings.Contains(stderr, "--function NAME or one FILE") {
		t.Errorf("config check without a source: exit %d, %q", code, stderr)
	}
}

// TestConfigCheckFunction reads a deployed function's environment through
// Lambda's API.
func TestConfigCheckFunction(t *testing.T) {
	fake := awsfake.New()
	t.Cleanup(fake.Close)
	for _, kv := range fake.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	fake.AddFunction("Drainpipe-Fn", map[string]string{"DRAINPIPE_CLUSTERS": "prod", "DRAINPIPE_ACTION_REBALANCE": "drain"})
	code, out, stderr := runCLI(t, nil, "", "config", "check", "--function", "Drainpipe-Fn")
	if code != exitUsage || !strings.Contains(out, "DRAINPIPE_ACTION_REBALANCE") {
		t.Errorf("exit %d, want %d naming DRAINPIPE_ACTION_REBALANCE:\n%s%s", code, exitUsage, out, stderr)
	}
	if code, _, stderr := runCLI(t, nil, "", "config", "check", "--function", "Missing"); code != exitFail {
		t.Errorf("a missing function: exit %d, want %d\n%s", code, exitFail, stderr)
	}
}
