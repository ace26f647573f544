package docs

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// drainpipeBin builds cmd/drainpipe once for the tests that run the
// guides' commands.
var drainpipeBin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "drainpipe-docs-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "drainpipe")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/drainpipe").CombinedOutput(); err != nil {
		return "", &buildError{err: err, out: string(out)}
	}
	return bin, nil
})

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "building cmd/drainpipe: " + e.err.Error() + "\n" + e.out }

// shellLines returns the commands of doc's ```sh blocks, continuation
// lines and quoted arguments joined, comments dropped.
func shellLines(t *testing.T, doc string) []string {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var in, quoted bool // in a sh block; in a single-quoted argument
	var cmd strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") && !quoted {
			in = trimmed == "```sh"
			continue
		}
		if !in {
			continue
		}
		trimmed, quoted = uncomment(trimmed, quoted)
		if more, ok := strings.CutSuffix(trimmed, `\`); ok && !quoted {
			cmd.WriteString(more + " ")
			continue
		}
		cmd.WriteString(trimmed)
		if quoted { // a quoted argument goes on
			cmd.WriteString("\n")
			continue
		}
		if c := strings.TrimSpace(cmd.String()); c != "" {
			out = append(out, c)
		}
		cmd.Reset()
	}
	return out
}

// uncomment cuts a shell comment off line, which starts inside a
// single-quoted argument when quoted; it returns the line and whether a
// quoted argument is still open at its end.
func uncomment(line string, quoted bool) (string, bool) {
	for i, c := range line {
		switch {
		case c == '\'':
			quoted = !quoted
		case c == '#' && !quoted && (i == 0 || line[i-1] == ' '):
			return strings.TrimSpace(line[:i]), quoted
		}
	}
	return line, quoted
}

// offline are the commands that need no AWS account or cluster.
var offline = []string{"drainpipe event", "drainpipe explain", "drainpipe nth-values", "drainpipe config check", "drainpipe webhook render", "drainpipe version"}

// envPrefixRE matches the variables a command line sets for itself.
var envPrefixRE = regexp.MustCompile(`^(?:[A-Z_]+='[^']*' )+`)

// runOffline runs doc's offline drainpipe commands in dir (which holds the
// files they read) and returns how many ran; each must exit 0.
func runOffline(t *testing.T, doc, dir string) int {
	t.Helper()
	bin, err := drainpipeBin()
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, c := range shellLines(t, doc) {
		bare := envPrefixRE.ReplaceAllString(c, "")
		if !slices.ContainsFunc(offline, func(p string) bool { return strings.HasPrefix(bare, p+" ") }) || strings.Contains(c, "--function ") {
			continue
		}
		sh := exec.Command("sh", "-c", c)
		sh.Dir = dir
		sh.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
		if out, err := sh.CombinedOutput(); err != nil {
			t.Errorf("%s: `%s`: %v\n%s", doc, c, err, out)
		}
		ran++
	}
	return ran
}

// TestMigrationGuideCommandsRun runs the migration guide's commands that
// need no AWS account: the notice that proves NTH receives is one the
// function and NTH can read.
func TestMigrationGuideCommandsRun(t *testing.T) {
	dir := t.TempDir()
	if n := runOffline(t, "migrating-from-nth.md", dir); n == 0 {
		t.Fatal("migrating-from-nth.md runs no offline drainpipe command: has the guide changed?")
	}
	b, err := os.ReadFile(filepath.Join(dir, "notice.json"))
	if err != nil {
		t.Fatalf("the rollback's notice: %v", err)
	}
	if got := instanceOf(string(b)); got != "i-00000000000000000" {
		t.Errorf("the rollback's notice names instance %q, want i-00000000000000000", got)
	}
}

// TestNTHCleanupFindsNTHMarks runs the guide's jq over nodes with and
// without NTH's marks: it names each node NTH left a mark on, the
// exclusion label included when NTH's value says it set it, and leaves
// out the nodes Drainpipe holds and a label someone else set.
func TestNTHCleanupFindsNTHMarks(t *testing.T) {
	var filter string
	for _, c := range shellLines(t, "migrating-from-nth.md") {
		if _, rest, ok := strings.Cut(c, "kubectl get nodes -o json | jq -r '"); ok {
			filter = strings.TrimSuffix(rest, "'")
		}
	}
	if filter == "" {
		t.Fatal("migrating-from-nth.md: no `kubectl get nodes -o json | jq -r '…'` in a sh block")
	}
	nodes := `{"items": [
 {"metadata": {"name": "nth-taint", "labels": {}}, "spec": {"taints": [{"key": "aws-node-termination-handler/spot-itn", "effect": "NoSchedule"}]}},
 {"metadata": {"name": "nth-label", "labels": {"aws-node-termination-handler/action": "cordon"}}, "spec": {}},
 {"metadata": {"name": "nth-lb", "labels": {"node.kubernetes.io/exclude-from-external-load-balancers": "aws-node-termination-handler"}}, "spec": {}},
 {"metadata": {"name": "own-lb", "labels": {"node.kubernetes.io/exclude-from-external-load-balancers": "true"}}, "spec": {}},
 {"metadata": {"name": "out-of-service", "labels": {}}, "spec": {"taints": [{"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}]}},
 {"metadata": {"name": "held", "labels": {"drainpipe.dev/held": "true"}}, "spec": {"taints": [{"key": "aws-node-termination-handler/spot-itn", "effect": "NoSchedule"}]}},
 {"metadata": {"name": "clean"}, "spec": {}}
]}`
	jq := exec.Command("jq", "-r", filter)
	jq.Stdin = strings.NewReader(nodes)
	out, err := jq.CombinedOutput()
	if err != nil {
		t.Fatalf("jq: %v\n%s", err, out)
	}
	got := strings.Fields(string(out))
	want := []string{"nth-taint", "nth-label", "nth-lb", "out-of-service"}
	if !slices.Equal(got, want) {
		t.Errorf("nodes with NTH's marks: got %v, want %v", got, want)
	}
}

// TestRunbookConfigCheckRuns runs the operations runbook's offline
// commands on a saved function configuration that the function accepts.
func TestRunbookConfigCheckRuns(t *testing.T) {
	dir := t.TempDir()
	fn := `{"FunctionName": "Drainpipe-Fn", "Environment": {"Variables": {"DRAINPIPE_CLUSTERS": "prod",
		"DRAINPIPE_WEBHOOK_TEMPLATE": "{\"text\": \"{{ .Reason }}: node $(uname) \\\"{{ .NodeName }}\\\"\"}"}}}`
	if err := os.WriteFile(filepath.Join(dir, "fn.json"), []byte(fn), 0o600); err != nil {
		t.Fatal(err)
	}
	if n := runOffline(t, "operations.md", dir); n == 0 {
		t.Fatal("operations.md runs no offline drainpipe command: has the runbook changed?")
	}
}

// TestWebhookExamplesRender renders each webhook template the operations
// guide gives, with a reason holding a quote, a backslash and a line
// break: each must make valid JSON that carries the reason.
func TestWebhookExamplesRender(t *testing.T) {
	bin, err := drainpipeBin()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("operations.md")
	if err != nil {
		t.Fatal(err)
	}
	reason := "evicting \"db-0\": Cannot evict pod as it would violate the pod's disruption budget.\n\tC:\\tmp"
	var n int
	for _, line := range strings.Split(string(doc), "\n") {
		tmpl, ok := strings.CutPrefix(line, "DRAINPIPE_WEBHOOK_TEMPLATE=")
		if !ok || strings.HasPrefix(tmpl, "'") { // a shell line: runOffline's

			continue
		}
		n++
		cmd := exec.Command(bin, "webhook", "render", "--reason", reason)
		cmd.Env = append(os.Environ(), "DRAINPIPE_WEBHOOK_TEMPLATE="+tmpl)
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("template %s: %v", tmpl, err)
			continue
		}
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Errorf("template %s renders invalid JSON (%v): %s", tmpl, err, out)
		} else if strings.Contains(tmpl, "{{ .Reason }}") && !strings.Contains(fmt.Sprint(v), reason) {
			t.Errorf("template %s: the reason does not come through unchanged: %s", tmpl, out)
		}
	}
	if n < 4 {
		t.Errorf("operations.md gives %d webhook templates, want Slack, Teams, PagerDuty and Chime", n)
	}
}
