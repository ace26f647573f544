package notify

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
)

const (
	secretARN    = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:drainpipe/webhook-AbCdEf"
	parameterARN = "arn:aws:ssm:eu-west-1:123456789012:parameter/drainpipe/webhook"
)

// fakeAWS answers Secrets Manager GetSecretValue and SSM GetParameter on
// their JSON wire protocol, counting calls.
type fakeAWS struct {
	value atomic.Value // string
	calls atomic.Int64
}

func newFakeAWS(value string) *fakeAWS {
	f := &fakeAWS{}
	f.value.Store(value)
	return f
}

func (f *fakeAWS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	var in map[string]any
	_ = json.NewDecoder(r.Body).Decode(&in)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	// Like the services, only the one secret and the one parameter exist,
	// by ARN or by name.
	switch r.Header.Get("X-Amz-Target") {
	case "secretsmanager.GetSecretValue":
		if id := in["SecretId"]; id != secretARN && id != "drainpipe/webhook" {
			http.Error(w, `{"__type":"ResourceNotFoundException","message":"Secrets Manager can't find the specified secret."}`, http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"ARN": secretARN, "Name": "drainpipe/webhook", "SecretString": f.value.Load()})
	case "AmazonSSM.GetParameter":
		if name := in["Name"]; name != parameterARN && name != "/drainpipe/webhook" {
			http.Error(w, `{"__type":"ParameterNotFound"}`, http.StatusBadRequest)
			return
		}
		if in["WithDecryption"] != true {
			http.Error(w, `{"__type":"ValidationException","message":"want decryption"}`, http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"Parameter": map[string]any{"Name": "/drainpipe/webhook", "ARN": parameterARN, "Value": f.value.Load()}})
	default:
		http.Error(w, `{"__type":"UnknownOperationException"}`, http.StatusBadRequest)
	}
}

func awsConfig(url string) aws.Config {
	return aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(url), RetryMaxAttempts: 1,
		Credentials: aws.AnonymousCredentials{}}
}

// secretOnFake is the Secret of arn read from a fake holding a webhook URL.
func secretOnFake(t *testing.T, arn string) (*Secret, *fakeAWS) {
	t.Helper()
	fake := newFakeAWS(`{"url":"https://hooks.example.test/T000/B000/XXXX"}`)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	cfg := awsConfig(srv.URL)
	s, err := NewSecretWith(arn, secretsmanager.NewFromConfig(cfg), ssm.NewFromConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return s, fake
}

func TestSecretReadsOnceByARN(t *testing.T) {
	for _, arn := range []string{secretARN, parameterARN} {
		t.Run(arn, func(t *testing.T) {
			s, fake := secretOnFake(t, arn)
			for range 3 {
				u, err := s.URL(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if got := u.String(); got != "https://hooks.example.test/T000/B000/XXXX" {
					t.Errorf("URL = %q", got)
				}
			}
			if n := fake.calls.Load(); n != 1 {
				t.Errorf("%d reads of the secret, want 1 (cached)", n)
			}
		})
	}
}

// The fake answers only the secret and the parameter it holds, so a
// Secret reading another one fails as it would against AWS.
func TestSecretOfAnotherARNNotFound(t *testing.T) {
	for arn, code := range map[string]string{
		"arn:aws:secretsmanager:eu-west-1:123456789012:secret:drainpipe/other-AbCdEf": "ResourceNotFoundException",
		"arn:aws:ssm:eu-west-1:123456789012:parameter/drainpipe/other":                "ParameterNotFound",
	} {
		t.Run(arn, func(t *testing.T) {
			s, _ := secretOnFake(t, arn)
			var api smithy.APIError
			if _, err := s.URL(context.Background()); !errors.As(err, &api) || api.ErrorCode() != code {
				t.Errorf("URL() error = %v, want %s", err, code)
			}
		})
	}
}

func TestParseWebhook(t *testing.T) {
	tests := []struct {
		raw, want string
		ok        bool
	}{
		{"https://hooks.example.test/services/T/B/secret\n", "https://hooks.example.test/services/T/B/secret", true},
		{`{"webhook_url": "https://hooks.example.test/x"}`, "https://hooks.example.test/x", true},
		{"http://127.0.0.1:8080/hook", "http://127.0.0.1:8080/hook", true},
		{"http://hooks.example.test/secret-token", "", false},
		{"not a url secret-token", "", false},
		{`{"url": 5, "token": "secret-token"}`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			u, err := parseWebhook(tt.raw)
			if (err == nil) != tt.ok {
				t.Fatalf("parseWebhook error %v, want ok=%v", err, tt.ok)
			}
			if err != nil {
				if strings.Contains(err.Error(), "secret-token") {
					t.Errorf("error %q quotes the secret", err)
				}
				return
			}
			if u.String() != tt.want {
				t.Errorf("URL %q, want %q", u, tt.want)
			}
		})
	}
}

func TestValidateARN(t *testing.T) {
	tests := map[string]bool{
		secretARN:    true,
		parameterARN: true,
		"arn:aws:secretsmanager:eu-west-1:123456789012:secret:": false,
		"arn:aws:s3:::bucket/key":                               false,
		"https://hooks.example.test/x":                          false,
		"arn:aws:ssm:eu-west-1:123456789012:document/x":         false,
	}
	for arn, ok := range tests {
		if err := ValidateARN(arn); (err == nil) != ok {
			t.Errorf("ValidateARN(%q) = %v, want ok=%v", arn, err, ok)
		}
	}
}

type fixedURL string

func (f fixedURL) URL(context.Context) (*neturl.URL, error) { return parseWebhook(string(f)) }

// receiver is a webhook on 127.0.0.1 answering status and keeping bodies.
type receiver struct {
	status int
	mu     sync.Mutex
	texts  []string
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	var m map[string]string
	if json.Unmarshal(b, &m) == nil && req.Header.Get("Content-Type") == "application/json" {
		r.mu.Lock()
		r.texts = append(r.texts, m["text"])
		r.mu.Unlock()
	}
	w.WriteHeader(r.status)
}

func task() (handler.Task, handler.Result) {
	deadline := time.Date(2026, 11, 20, 10, 2, 0, 0, time.UTC)
	return handler.Task{InstanceID: "i-0abc", Interruptions: []event.Interruption{{Kind: event.KindSpotInterruption, EventID: "ev-1", Deadline: deadline}}},
		handler.Result{Status: handler.StatusDone, Node: "node-a", Reason: "drained node node-a: 2 evicted"}
}

func TestRecordTaskPostsOneMessage(t *testing.T) {
	rcv := &receiver{status: http.StatusOK}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	n := New(fixedURL(srv.URL+"/hook"), Options{OnError: func(err error) { t.Errorf("OnError(%v)", err) }})
	tk, res := task()
	n.RecordDrain("prod", drain.Report{Node: "node-a"})
	n.RecordTask(tk, res, 1500*time.Millisecond)
	n.RecordTask(tk, handler.Result{Status: handler.StatusIgnored, Reason: "not ours"}, 0) // no drain: no message
	n.Flush(context.Background())
	want := []string{"Drainpipe: spot-interruption on instance i-0abc, node node-a (cluster prod), deadline 2026-11-20T10:02:00Z" +
		" — done in 1.5s: drained node node-a: 2 evicted (event ev-1)"}
	if diff := cmp.Diff(want, rcv.texts); diff != "" {
		t.Errorf("messages received (-want +got):\n%s", diff)
	}
}

func TestFailingWebhookIsReportedNotRaised(t *testing.T) {
	rcv := &receiver{status: http.StatusInternalServerError}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	hook := srv.URL + "/services/secret-token"
	var errs []error
	n := New(fixedURL(hook), Options{OnError: func(err error) { errs = append(errs, err) }})
	tk, res := task()
	n.RecordDrain("prod", drain.Report{Node: "node-a"})
	n.RecordTask(tk, res, time.Second)
	n.Flush(context.Background())
	if len(errs) != 1 {
		t.Fatalf("OnError called %d times, want once", len(errs))
	}
	srv.Close() // now a connection error, whose url.Error would quote the URL
	err := n.Send(context.Background(), "x")
	for _, e := range append(errs, err) {
		if e == nil || strings.Contains(e.Error(), "secret-token") {
			t.Errorf("error %v: want an error that does not quote the URL", e)
		}
	}
}

func TestSecretErrorIsNotCached(t *testing.T) {
	fake := newFakeAWS("not a url")
	srv := httptest.NewServer(fake)
	defer srv.Close()
	cfg := awsConfig(srv.URL)
	s, err := NewSecretWith(secretARN, secretsmanager.NewFromConfig(cfg), ssm.NewFromConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.URL(context.Background()); err == nil {
		t.Fatal("a secret that is no URL was accepted")
	}
	fake.value.Store("https://hooks.example.test/x")
	if _, err := s.URL(context.Background()); err != nil {
		t.Errorf("second read: %v, want the corrected secret", err)
	}
}
