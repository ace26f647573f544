// Command echo is a tiny aws-lambda-go function for the harness's own tests:
// the event says what it should do, the environment how its init goes.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

type request struct {
	Echo json.RawMessage `json:"echo"`
	Fail string          `json:"fail"`
	Hang bool            `json:"hang"`
	Exit int             `json:"exit"`
}

type reply struct {
	Echo        json.RawMessage   `json:"echo"`
	RequestID   string            `json:"request_id"`
	FunctionARN string            `json:"function_arn"`
	DeadlineMS  int64             `json:"deadline_ms"`
	Env         map[string]string `json:"env"`
}

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	if msg := os.Getenv("ECHO_INIT_ERROR"); msg != "" {
		reportInitError(msg)
		log.Error("init failed", "error", msg)
		os.Exit(1)
	}
	handler := func(ctx context.Context, req request) (reply, error) {
		lc, _ := lambdacontext.FromContext(ctx)
		log.Info("invoked", "request_id", lc.AwsRequestID)
		switch {
		case req.Fail != "":
			return reply{}, errors.New(req.Fail)
		case req.Hang:
			select {} // until the harness kills the process
		case req.Exit != 0:
			os.Exit(req.Exit)
		}
		dl, _ := ctx.Deadline()
		env := map[string]string{}
		for _, k := range []string{"AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "_HANDLER", "AWS_REGION", "EXTRA"} {
			env[k] = os.Getenv(k)
		}
		return reply{Echo: req.Echo, RequestID: lc.AwsRequestID, FunctionARN: lc.InvokedFunctionArn, DeadlineMS: dl.UnixMilli(), Env: env}, nil
	}
	var opts []lambda.Option
	if os.Getenv("ECHO_SIGTERM") != "" {
		opts = append(opts, lambda.WithEnableSIGTERM(func() { log.Info("sigterm") }))
	}
	lambda.StartWithOptions(handler, opts...)
}

// reportInitError does what a runtime does when its init fails; aws-lambda-go
// has no call for it.
func reportInitError(msg string) {
	body, _ := json.Marshal(map[string]string{"errorType": "Runtime.InitError", "errorMessage": msg})
	url := "http://" + os.Getenv("AWS_LAMBDA_RUNTIME_API") + "/2018-06-01/runtime/init/error"
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Lambda-Runtime-Function-Error-Type", "Runtime.InitError")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}
