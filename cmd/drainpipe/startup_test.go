package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go/logging"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// commandCase is one command run as an operator would, in a scene with a
// cluster and AWS behind it.
type commandCase struct {
	args    []string
	stdin   string
	env     map[string]string
	metrics bool // writes EMF metrics when DRAINPIPE_METRICS is on
}

// commandCases covers every command of commands(): each must run here.
func commandCases(ctx context.Context, t *testing.T, s *runScene) map[string]commandCase {
	t.Helper()
	_, dlq := newQueues(t, s.fake)
	values := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(values, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	clusters := map[string]string{"DRAINPIPE_CLUSTERS": runCluster}
	kc, err := clientcmd.LoadFromFile(s.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]commandCase{
		"explain":    {args: []string{"explain", "-"}, stdin: lifecycleBody(s.instance)},
		"run":        {args: []string{"run", "--kubeconfig", s.kubeconfig, "--dry-run", "-"}, stdin: lifecycleBody(s.instance), env: clusters, metrics: true},
		"sweep":      {args: []string{"sweep", "--kubeconfig", s.kubeconfig, "--context", kc.CurrentContext, "--yes"}, env: clusters, metrics: true},
		"nodes":      {args: []string{"nodes", "--kubeconfig", s.kubeconfig}},
		"uncordon":   {args: []string{"uncordon", "--kubeconfig", s.kubeconfig, "--dry-run", s.node.Name}},
		"version":    {args: []string{"version"}},
		"dlq":        {args: []string{"dlq", "list", "--queue", dlq}},
		"event":      {args: []string{"event", "spot"}},
		"nth-values": {args: []string{"nth-values", values}},
		"check":      {args: []string{"check", "--kubeconfig", s.kubeconfig, "-c", "clusters=" + runCluster, "-o", "json"}},
		"config":     {args: []string{"config", "check", "-"}, stdin: `{"DRAINPIPE_CLUSTERS": "prod"}`},
		"webhook":    {args: []string{"webhook", "render"}},
	}
}

// TestEveryCommandStartsAlike runs every command: with
// DRAINPIPE_METRICS=false none writes an EMF document, what each writes on
// standard error is JSON lines only (client-go's and the AWS SDK's lines
// included: nothing reaches the process's own standard error), and each
// one's --help states its exit codes.
func TestEveryCommandStartsAlike(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	s := newRunScene(ctx, t)
	cases := commandCases(ctx, t, s)
	for name := range commands() {
		if _, ok := cases[name]; !ok {
			t.Errorf("command %s has no case here", name)
		}
	}
	chattyKlog(t)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for _, on := range []bool{false, true} {
				env := map[string]string{"DRAINPIPE_METRICS": "false"}
				if on {
					env["DRAINPIPE_METRICS"] = "true"
				}
				for k, v := range tc.env {
					env[k] = v
				}
				var code int
				var stdout, stderr string
				process := captureStderr(t, func() { code, stdout, stderr = runCLI(t, env, tc.stdin, tc.args...) })
				if code != exitOK && !(name == "check" && code == exitFail) {
					t.Fatalf("metrics %v: exit %d\nstdout: %s\nstderr: %s", on, code, stdout, stderr)
				}
				emf := strings.Contains(stdout+stderr, `"_aws"`)
				if want := on && tc.metrics; emf != want {
					t.Errorf("DRAINPIPE_METRICS=%v: EMF written %v, want %v\nstderr: %s", on, emf, want, stderr)
				}
				for i, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
					var v map[string]any
					if line != "" && json.Unmarshal([]byte(line), &v) != nil {
						t.Errorf("stderr line %d is not JSON: %q", i+1, line)
					}
				}
				if process != "" {
					t.Errorf("written to the process's standard error, past the command's: %q", process)
				}
			}
		})
	}
}

// TestHelpStatesExitCodes: every command's -h names its exit codes.
func TestHelpStatesExitCodes(t *testing.T) {
	exits := regexp.MustCompile(`Exits 0 [^.]*, 2 `)
	for name := range commands() {
		code, stdout, stderr := runCLI(t, nil, "", name, "--help")
		if code != exitOK || !exits.MatchString(strings.ReplaceAll(stderr, "\n", " ")) {
			t.Errorf("%s --help: exit %d, stdout %q\n%s\nwant exit 0 and the exit codes (Exits 0 …, 2 …)", name, code, stdout, stderr)
		}
	}
}

// TestUsageNamesEveryFlag: the top-level usage of each command names
// every flag it takes (or says "..." where it lists some), and only those.
func TestUsageNamesEveryFlag(t *testing.T) {
	named := regexp.MustCompile(`(?:^|[\s\[|])(--?[a-z][a-z-]*)`)
	for name, cmd := range commands() {
		fs := flagsOf(t, name)
		var given []string
		for _, m := range named.FindAllStringSubmatch(cmd.usage, -1) {
			given = append(given, strings.TrimLeft(m[1], "-"))
		}
		fs.VisitAll(func(f *flag.Flag) {
			if !slices.Contains(given, f.Name) && !strings.Contains(cmd.usage, "...") {
				t.Errorf("usage of %s lacks -%s: %s", name, f.Name, cmd.usage)
			}
		})
		for _, g := range given {
			if fs.Lookup(g) == nil && g != "version" {
				t.Errorf("usage of %s names -%s, which it does not take", name, g)
			}
		}
	}
}

// flagsOf reads a command's flags from its -h output.
func flagsOf(t *testing.T, name string) *flag.FlagSet {
	t.Helper()
	_, _, help := runCLI(t, nil, "", name, "-h")
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z][a-z-]*)`).FindAllStringSubmatch(help, -1) {
		fs.Bool(m[1], false, "")
	}
	return fs
}

// chattyKlog makes client-go log every request through klog, as -v=6
// would, for the test.
func chattyKlog(t *testing.T) {
	t.Helper()
	var fs flag.FlagSet
	klog.InitFlags(&fs)
	if err := fs.Set("v", "6"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fs.Set("v", "0") })
}

// captureStderr runs f with the process's standard error in a file and
// returns what was written there: libraries that log on their own
// (klog, the AWS SDK's default logger) write to it.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	file, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = file
	func() {
		defer func() { os.Stderr = saved }()
		f()
	}()
	klog.Flush()
	data, err := os.ReadFile(file.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestRunWithoutCredentials: no AWS credentials is a configuration
// problem, said once, before anything is handled: exit 2, not 3 ("would
// retry") with the reason wrapped twice.
func TestRunWithoutCredentials(t *testing.T) {
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "",
		"AWS_WEB_IDENTITY_TOKEN_FILE": "", "AWS_REGION": awsfake.Region, "AWS_ENDPOINT_URL": "http://127.0.0.1:1"} {
		t.Setenv(k, v)
	}
	env := map[string]string{"DRAINPIPE_CLUSTERS": runCluster}
	code, stdout, stderr := runCLI(t, env, lifecycleBody("i-0123456789abcdef0"), "run", "--kubeconfig", writeKubeconfig(t), "--yes", "-")
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "credentials") {
		t.Fatalf("exit %d, stdout %q, stderr %s; want %d and the missing credentials named", code, stdout, stderr, exitUsage)
	}
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.Count(line, "credentials") > 2 || saidTwice(line) {
			t.Errorf("the reason is said more than once: %s", line)
		}
	}
}

// saidTwice reports whether a message wraps the same prefix twice in a
// row ("describing 1 instances: describing 1 instances: …").
func saidTwice(line string) bool {
	parts := strings.Split(line, ": ")
	for i := 1; i < len(parts); i++ {
		if parts[i] == parts[i-1] {
			return true
		}
	}
	return false
}

// TestSweepArguments: sweep says what is wrong with its arguments, and
// takes --context as nodes and uncordon do.
func TestSweepArguments(t *testing.T) {
	kc := writeKubeconfig(t)
	env := map[string]string{"DRAINPIPE_CLUSTERS": "prod"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad timeout", []string{"sweep", "--kubeconfig", kc, "--dry-run", "--timeout", "-1s"}, "--timeout must be positive"},
		{"extra argument", []string{"sweep", "--kubeconfig", kc, "--dry-run", "now"}, "unexpected argument"},
		{"unknown context", []string{"sweep", "--kubeconfig", kc, "--dry-run", "--context", "typo"}, `context \"typo\" not found`}, // a JSON line
		{"context without kubeconfig", []string{"sweep", "--dry-run", "--context", "real"}, "--context needs --kubeconfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, env, "", tc.args...)
			if code != exitUsage || stdout != "" || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and %q", code, stdout, stderr, exitUsage, tc.want)
			}
		})
	}
}

// TestEventNamesTheKinds: an unknown kind is answered with the kinds.
func TestEventNamesTheKinds(t *testing.T) {
	code, _, stderr := runCLI(t, nil, "", "event", "nosuch")
	for _, kind := range []string{"spot", "rebalance", "asg-launch", "capacity-block"} {
		if code != exitUsage || !strings.Contains(stderr, kind) {
			t.Errorf("event nosuch: exit %d, stderr %q; want %d and the kinds (%s among them)", code, stderr, exitUsage, kind)
		}
	}
}

// TestTimeFlagsSayTheFormat: a bad --at or --now is answered with the
// format wanted and an example, not Go's layout string.
func TestTimeFlagsSayTheFormat(t *testing.T) {
	for _, args := range [][]string{{"event", "spot", "--at", "yesterday"}, {"explain", "--now", "yesterday"}} {
		code, _, stderr := runCLI(t, nil, "", args...)
		if code != exitUsage || !strings.Contains(stderr, "RFC 3339") || !strings.Contains(stderr, "2026-11-28T10:00:00Z") ||
			strings.Contains(stderr, "2006") {
			t.Errorf("%v: exit %d, stderr %q; want %d, RFC 3339 and an example, no Go layout", args, code, stderr, exitUsage)
		}
	}
}

// TestStartRoutesLibraryLogs: after the start-up, klog's and the AWS SDK's
// lines are JSON lines on the command's standard error, at the level
// DRAINPIPE_LOG_LEVEL sets, and nothing reaches the process's own.
func TestStartRoutesLibraryLogs(t *testing.T) {
	fake := awsfake.New() // its credentials and region
	t.Cleanup(fake.Close)
	for _, kv := range fake.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	var stderr strings.Builder
	c := cli{Stderr: &stderr, Getenv: func(k string) string { return map[string]string{"DRAINPIPE_LOG_LEVEL": "info"}[k] }}
	process := captureStderr(t, func() {
		s, code := start(c, "test", startSpec{config: true})
		defer s.end()
		if code < 0 {
			code = s.connect(t.Context())
		}
		if code >= 0 {
			t.Fatalf("start-up: exit %d: %s", code, stderr.String())
		}
		klog.Warning("from klog") // klog passes it on as info
		klog.V(2).Info("below the level")
		s.aws.Logger.Logf(logging.Warn, "from the SDK")
		s.aws.Logger.Logf(logging.Debug, "below the level")
	})
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	for _, want := range []string{"from klog", "from the SDK"} {
		if !slices.ContainsFunc(lines, func(l string) bool { return json.Valid([]byte(l)) && strings.Contains(l, want) }) {
			t.Errorf("no JSON line %q in %q", want, lines)
		}
	}
	if len(lines) != 2 || process != "" {
		t.Errorf("stderr %q, process stderr %q; want the two warnings only", lines, process)
	}
}
