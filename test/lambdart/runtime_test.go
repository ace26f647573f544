package lambdart_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/test/lambdart"
)

var echo struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if echo.dir != "" {
		os.RemoveAll(echo.dir)
	}
	os.Exit(code)
}

// echoBootstrap builds testdata/echo once per test binary.
func echoBootstrap(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a bootstrap; skipped under -short")
	}
	echo.once.Do(func() {
		echo.dir, echo.err = os.MkdirTemp("", "lambdart-echo-")
		if echo.err != nil {
			return
		}
		echo.path = filepath.Join(echo.dir, "bootstrap")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		echo.err = lambdart.Build{Dir: ".", Package: "./testdata/echo", Output: echo.path}.Run(ctx)
	})
	if echo.err != nil {
		t.Fatal(echo.err)
	}
	return echo.path
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

type echoReply struct {
	Echo        json.RawMessage   `json:"echo"`
	RequestID   string            `json:"request_id"`
	FunctionARN string            `json:"function_arn"`
	DeadlineMS  int64             `json:"deadline_ms"`
	Env         map[string]string `json:"env"`
}

func TestInvokeResponds(t *testing.T) {
	ctx := testContext(t)
	rt := lambdart.Start(t, lambdart.Options{
		Bootstrap:    echoBootstrap(t),
		FunctionName: "echo",
		MemoryMB:     256,
		Env:          []string{"EXTRA=yes", "AWS_REGION=eu-west-1"},
	})
	ready, err := rt.Ready(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ready <= 0 {
		t.Errorf("Ready() = %v, want a positive duration", ready)
	}
	t.Logf("process start to ready: %v", ready)

	// Twice: the second proves the bootstrap came back to /next.
	for i, payload := range []string{`{"echo":{"n":1}}`, `{"echo":"two"}`} {
		before := time.Now()
		res, err := rt.Invoke(ctx, []byte(payload), 10*time.Second)
		if err != nil {
			t.Fatalf("invoke %d: %v", i, err)
		}
		if res.Error != nil {
			t.Fatalf("invoke %d: function error %+v", i, res.Error)
		}
		var got echoReply
		if err := json.Unmarshal(res.Body, &got); err != nil {
			t.Fatalf("invoke %d: decoding %s: %v", i, res.Body, err)
		}
		var in struct{ Echo json.RawMessage }
		_ = json.Unmarshal([]byte(payload), &in)
		if string(got.Echo) != string(in.Echo) {
			t.Errorf("invoke %d: echo = %s, want %s", i, got.Echo, in.Echo)
		}
		if got.RequestID != res.RequestID || res.RequestID == "" {
			t.Errorf("invoke %d: function saw request id %q, harness reported %q", i, got.RequestID, res.RequestID)
		}
		if got.FunctionARN != rt.FunctionARN() {
			t.Errorf("invoke %d: function ARN = %q, want %q", i, got.FunctionARN, rt.FunctionARN())
		}
		// The deadline travels in whole milliseconds from now+timeout.
		if lo, hi := before.Add(10*time.Second).UnixMilli(), time.Now().Add(10*time.Second).UnixMilli(); got.DeadlineMS < lo || got.DeadlineMS > hi {
			t.Errorf("invoke %d: deadline %d outside [%d, %d]", i, got.DeadlineMS, lo, hi)
		}
		wantEnv := map[string]string{
			"AWS_LAMBDA_FUNCTION_NAME": "echo", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
			"_HANDLER": "bootstrap", "AWS_REGION": "eu-west-1", "EXTRA": "yes",
		}
		if diff := cmp.Diff(wantEnv, got.Env); diff != "" {
			t.Errorf("invoke %d: env (-want +got):\n%s", i, diff)
		}
		if _, err := rt.WaitLog(ctx, func(l string) bool { return strings.Contains(l, res.RequestID) }); err != nil {
			t.Errorf("invoke %d: no log line with the request id: %v", i, err)
		}
	}
	var invoked int
	for _, r := range rt.Records() {
		if r["msg"] == "invoked" {
			invoked++
		}
	}
	if invoked != 2 {
		t.Errorf("%d JSON records with msg=invoked, want 2", invoked)
	}
	rss, err := rt.PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	if rss <= 0 {
		t.Errorf("PeakRSS() = %d, want positive", rss)
	}
	t.Logf("peak RSS: %d KiB", rss/1024)
}

func TestInvokeFunctionError(t *testing.T) {
	ctx := testContext(t)
	rt := lambdart.Start(t, lambdart.Options{Bootstrap: echoBootstrap(t)})
	res, err := rt.Invoke(ctx, []byte(`{"fail":"boom"}`), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := &lambdart.ErrorBody{Type: "errorString", Message: "boom"}
	if diff := cmp.Diff(want, res.Error); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	if res.Body != nil {
		t.Errorf("body = %s, want none", res.Body)
	}
	// A function error leaves the environment in service.
	res, err = rt.Invoke(ctx, []byte(`{"echo":1}`), 10*time.Second)
	if err != nil || res.Error != nil {
		t.Fatalf("invoke after a function error: %v, %+v", err, res.Error)
	}
}

func TestInitError(t *testing.T) {
	ctx := testContext(t)
	rt := lambdart.Start(t, lambdart.Options{Bootstrap: echoBootstrap(t), Env: []string{"ECHO_INIT_ERROR=no config"}})

	_, err := rt.Invoke(ctx, []byte(`{}`), 10*time.Second)
	var initErr *lambdart.InitError
	if !errors.As(err, &initErr) {
		t.Fatalf("Invoke() error = %v, want an *InitError", err)
	}
	want := lambdart.ErrorBody{Type: "Runtime.InitError", Message: "no config"}
	if diff := cmp.Diff(want, initErr.Body); diff != "" {
		t.Errorf("init error (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&want, rt.InitError()); diff != "" {
		t.Errorf("InitError() (-want +got):\n%s", diff)
	}
	state, err := rt.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := state.ExitCode(); got != 1 {
		t.Errorf("exit code = %d, want 1", got)
	}
}

func TestProcessExits(t *testing.T) {
	tests := []struct {
		name     string
		env      []string
		payload  string
		wantCode int
	}{
		{name: "during an invocation", payload: `{"exit":3}`, wantCode: 3},
		{name: "before init completes", env: []string{"AWS_LAMBDA_RUNTIME_API="}, payload: `{}`, wantCode: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			rt := lambdart.Start(t, lambdart.Options{Bootstrap: echoBootstrap(t), Env: tt.env})
			_, err := rt.Invoke(ctx, []byte(tt.payload), 10*time.Second)
			if !errors.Is(err, lambdart.ErrExited) {
				t.Errorf("Invoke() error = %v, want ErrExited", err)
			}
			state, err := rt.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := state.ExitCode(); got != tt.wantCode {
				t.Errorf("exit code = %d, want %d", got, tt.wantCode)
			}
		})
	}
}

func TestInvokeTimesOut(t *testing.T) {
	ctx := testContext(t)
	rt := lambdart.Start(t, lambdart.Options{Bootstrap: echoBootstrap(t)})
	if _, err := rt.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := rt.Invoke(ctx, []byte(`{"hang":true}`), 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut() {
		t.Fatalf("response = %+v, want a timeout", res)
	}
	select {
	case <-rt.Exited():
	default:
		t.Error("process still running after a timeout")
	}
	if _, err := rt.Invoke(ctx, []byte(`{}`), time.Second); !errors.Is(err, lambdart.ErrExited) {
		t.Errorf("Invoke() after a timeout: error = %v, want ErrExited", err)
	}
}

func TestAnswerForUnknownRequestRefused(t *testing.T) {
	ctx := testContext(t)
	rt := lambdart.Start(t, lambdart.Options{Bootstrap: echoBootstrap(t)})
	for _, kind := range []string{"response", "error"} {
		url := "http://" + rt.Addr() + "/2018-06-01/runtime/invocation/not-a-request/" + kind
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("POST %s: status %d, want %d", kind, resp.StatusCode, http.StatusBadRequest)
		}
	}
}

func TestCloseSendsSIGTERMToExtensionUsers(t *testing.T) {
	ctx := testContext(t)
	rt, err := lambdart.Launch(ctx, lambdart.Options{Bootstrap: echoBootstrap(t), Env: []string{"ECHO_SIGTERM=1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rt.Records() {
		got = append(got, fmt.Sprint(r["msg"]))
	}
	if diff := cmp.Diff([]string{"sigterm"}, got); diff != "" {
		t.Errorf("log messages (-want +got):\n%s", diff)
	}
}

func TestBuildFailureReported(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build; skipped under -short")
	}
	err := lambdart.Build{Dir: ".", Package: "./testdata/missing", Output: filepath.Join(t.TempDir(), "x")}.Run(testContext(t))
	if err == nil || !strings.Contains(err.Error(), "testdata/missing") {
		t.Errorf("Run() error = %v, want one naming the package", err)
	}
}
