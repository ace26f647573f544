package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// rieModule is AWS's Lambda Runtime Interface Emulator, the program inside
// SAM's images that `sam local invoke` runs the function under. It is
// published only as a pseudo-version.
const rieModule = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d"

// samRecipe returns the context of docs/local-testing.md's `npx cdk synth`
// and the arguments of its `go run ./cmd/drainpipe event` line.
func samRecipe(t *testing.T) (ctx map[string]any, event []string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "local-testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "## Local invocation with SAM")
	section, _, _ = strings.Cut(section, "\n## ")
	var inSh bool
	for _, line := range strings.Split(section, "\n") {
		if fence, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
			inSh = fence == "sh"
			continue
		}
		if !inSh {
			continue
		}
		words, err := shellWords(strings.TrimSpace(line))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case len(words) > 3 && words[0] == "npx" && words[1] == "cdk" && words[2] == "synth":
			ctx = map[string]any{}
			for i := 3; i+1 < len(words); i++ {
				if words[i] == "-c" {
					k, v, _ := strings.Cut(words[i+1], "=")
					ctx[k] = v
				}
			}
		case len(words) > 3 && strings.Join(words[:4], " ") == "go run ./cmd/drainpipe event":
			for _, w := range words[3:] {
				if w == ">" {
					break
				}
				event = append(event, w)
			}
		}
	}
	if ctx == nil || event == nil {
		t.Fatalf("docs/local-testing.md's SAM recipe: no `npx cdk synth -c …` (%v) or `go run ./cmd/drainpipe event …` (%v)", ctx, event)
	}
	return ctx, event
}

// rieBinary builds aws-lambda-rie once into the user's cache.
func rieBinary(ctx context.Context, t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	_, version, _ := strings.Cut(rieModule, "@")
	dir := filepath.Join(cache, "drainpipe", "aws-lambda-rie-"+version)
	bin := filepath.Join(dir, "aws-lambda-rie")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	cmd := exec.CommandContext(ctx, "go", "install", rieModule)
	cmd.Dir = t.TempDir() // outside any module: go install pkg@version ignores ours
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install %s: %v\n%s", rieModule, err, out)
	}
	return bin
}

// syncBuffer collects a process's output while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestSAMRecipeUnderRIE runs docs/local-testing.md's `sam local invoke`
// recipe for real, without Docker: the bootstrap (built for this machine)
// under aws-lambda-rie, the emulator SAM's images run, with the function's
// environment from the template the recipe's `cdk synth` context makes,
// invoked with the event the recipe's `drainpipe event` line makes. The
// record must be acted on in dry run, and nothing retried.
func TestSAMRecipeUnderRIE(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the bootstrap and aws-lambda-rie")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	synthCtx, eventArgs := samRecipe(t)
	p, err := FromContext(func(k string) any { return synthCtx[k] })
	if err != nil {
		t.Fatal(err)
	}
	p.AssetDir = fakeAsset(t)
	tpl := synth(t, p)
	fn := tpl.byAlias(t, "Function")
	env := []string{"PATH=" + os.Getenv("PATH"), "AWS_REGION=us-east-1", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_LAMBDA_FUNCTION_NAME=Function", "AWS_ACCESS_KEY_ID=AKIDLOCAL", "AWS_SECRET_ACCESS_KEY=local",
		fmt.Sprintf("AWS_LAMBDA_FUNCTION_MEMORY_SIZE=%v", fn.Properties["MemorySize"]),
		fmt.Sprintf("AWS_LAMBDA_FUNCTION_TIMEOUT=%v", fn.Properties["Timeout"]), "AWS_ENDPOINT_URL_EC2=" + emptyEC2(t)}
	vars, _ := fn.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
	for k, v := range vars {
		s, ok := tpl.concrete(v).(string)
		if !ok {
			s = tpl.render(v)
		}
		env = append(env, k+"="+s)
	}

	dir := t.TempDir()
	// DRAINPIPE_E2E_BOOTSTRAP names a bootstrap built for this machine, as
	// for test/e2e; otherwise it is built with test/e2e's flags, so that
	// `make test` finds it in the build cache.
	bootstrap := os.Getenv("DRAINPIPE_E2E_BOOTSTRAP")
	if bootstrap == "" {
		bootstrap = filepath.Join(dir, "bootstrap")
		build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-tags", "lambda.norpc", "-o", bootstrap, "-ldflags", "-s -w", "./lambda")
		build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building the bootstrap: %v\n%s", err, out)
		}
	}
	gen := exec.CommandContext(ctx, "go", append([]string{"run", "./cmd/drainpipe"}, eventArgs...)...)
	gen.Dir = root
	var genErr bytes.Buffer
	gen.Stderr = &genErr
	event, err := gen.Output()
	if err != nil {
		t.Fatalf("drainpipe %v: %v\n%s", eventArgs, err, genErr.String())
	}
	rie := rieBinary(ctx, t)

	addr, api := freePort(t), freePort(t)
	var out syncBuffer
	run := exec.CommandContext(ctx, rie, "--runtime-interface-emulator-address", addr, "--runtime-api-address", api, bootstrap)
	run.Dir, run.Env, run.Stdout, run.Stderr = dir, env, &out, &out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		run.Process.Kill()
		run.Wait()
	})
	// Wait for the emulator's listener; the invoke then waits for the
	// function's init itself.
	for {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("aws-lambda-rie never listened on %s: %v\n%s", addr, err, out.String())
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/2015-03-31/functions/function/invocations", bytes.NewReader(event))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("invoking: %v\n%s", err, out.String())
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		BatchItemFailures []any `json:"batchItemFailures"`
	}
	if err := json.Unmarshal(body, &answer); err != nil || answer.BatchItemFailures == nil || len(answer.BatchItemFailures) != 0 {
		t.Errorf("the function answered %s (%v), want {\"batchItemFailures\":[]}\n%s", body, err, out.String())
	}
	var started, handled bool
	for _, line := range strings.Split(out.String(), "\n") {
		var l struct{ Msg, Outcome, Reason string }
		if json.Unmarshal([]byte(line), &l) != nil {
			continue // the emulator's own lines, EMF documents decode too
		}
		switch l.Msg {
		case "started":
			started = true
		case "record handled":
			handled = l.Outcome == "ignored" && strings.Contains(l.Reason, "instance not found in EC2")
		}
	}
	if !started || !handled {
		t.Errorf("want a started line and the record handled, its instance looked up; the emulator's output:\n%s", out.String())
	}
	t.Logf("under aws-lambda-rie:\n%s", out.String())
}

// emptyEC2 serves DescribeInstances on 127.0.0.1 as EC2 answers for
// instances it does not know: the dry run looks the event's instance up.
func emptyEC2(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/xml")
		fmt.Fprint(w, `<DescribeInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r</requestId><reservationSet/></DescribeInstancesResponse>`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
