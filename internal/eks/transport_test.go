package eks

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
)

// tokens is a tokenSource handing out numbered tokens.
type tokens struct {
	n           int
	failAfter   int // the call after which Token fails; 0: never
	invalidated []string
}

func (s *tokens) Token(context.Context, string) (Token, error) {
	s.n++
	if s.failAfter > 0 && s.n > s.failAfter {
		return Token{}, errors.New("no credentials")
	}
	v := fmt.Sprintf("t%d", s.n)
	return Token{value: &v}, nil
}

func (s *tokens) Invalidate(_ string, t Token) { s.invalidated = append(s.invalidated, t.Bearer()) }

// answers is a RoundTripper answering the statuses in turn (the last
// repeatedly) and keeping the Authorization headers and bodies sent.
type answers struct {
	codes  []int
	err    error
	auth   []string
	bodies []string
}

func (a *answers) RoundTrip(req *http.Request) (*http.Response, error) {
	a.auth = append(a.auth, req.Header.Get("Authorization"))
	if req.Body != nil {
		b, _ := io.ReadAll(req.Body)
		a.bodies = append(a.bodies, string(b))
	}
	if a.err != nil {
		return nil, a.err
	}
	code := a.codes[min(len(a.auth)-1, len(a.codes)-1)]
	return &http.Response{StatusCode: code, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

func request(t *testing.T, body string, replay bool) *http.Request {
	t.Helper()
	var r io.Reader = http.NoBody
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(http.MethodPost, "https://k8s.example/api", r)
	if err != nil {
		t.Fatal(err)
	}
	if !replay {
		req.GetBody = nil
	}
	return req
}

func TestBearerRetriesA401Once(t *testing.T) {
	tests := []struct {
		name      string
		codes     []int
		body      string
		noReplay  bool
		getBody   func() (io.ReadCloser, error)
		failAfter int
		wantAuth  []string
		wantCode  int
		wantInval []string
	}{
		{name: "accepted", codes: []int{200}, wantAuth: []string{"Bearer t1"}, wantCode: 200},
		{name: "forbidden is no token problem", codes: []int{403}, wantAuth: []string{"Bearer t1"}, wantCode: 403},
		{name: "401 then accepted", codes: []int{401, 200}, body: "{}", wantAuth: []string{"Bearer t1", "Bearer t2"},
			wantCode: 200, wantInval: []string{"t1"}},
		{name: "401 without a body", codes: []int{401, 200}, wantAuth: []string{"Bearer t1", "Bearer t2"},
			wantCode: 200, wantInval: []string{"t1"}},
		{name: "401 twice", codes: []int{401}, wantAuth: []string{"Bearer t1", "Bearer t2"}, wantCode: 401, wantInval: []string{"t1"}},
		{name: "body spent", codes: []int{401, 200}, body: "{}", noReplay: true, wantAuth: []string{"Bearer t1"}, wantCode: 401},
		{name: "body not replayable", codes: []int{401, 200}, body: "{}",
			getBody:  func() (io.ReadCloser, error) { return nil, errors.New("gone") },
			wantAuth: []string{"Bearer t1"}, wantCode: 401},
		{name: "no fresh token", codes: []int{401, 200}, failAfter: 1, wantAuth: []string{"Bearer t1"}, wantCode: 401,
			wantInval: []string{"t1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := &answers{codes: tt.codes}
			src := &tokens{failAfter: tt.failAfter}
			b := &bearer{base: base, cluster: "blue", tokens: src}
			req := request(t, tt.body, !tt.noReplay)
			if tt.getBody != nil {
				req.GetBody = tt.getBody
			}
			resp, err := b.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantCode || strings.Join(base.auth, ",") != strings.Join(tt.wantAuth, ",") ||
				strings.Join(src.invalidated, ",") != strings.Join(tt.wantInval, ",") {
				t.Errorf("status %d, sent %q, invalidated %q; want %d, %q, %q", resp.StatusCode, base.auth, src.invalidated,
					tt.wantCode, tt.wantAuth, tt.wantInval)
			}
			if tt.body != "" && len(base.bodies) == 2 && base.bodies[1] != tt.body {
				t.Errorf("replayed body %q, want %q", base.bodies[1], tt.body)
			}
			if req.Header.Get("Authorization") != "" {
				t.Error("the caller's request was modified")
			}
		})
	}
}

func TestBearerErrors(t *testing.T) {
	base := &answers{codes: []int{200}}
	b := &bearer{base: base, cluster: "blue", tokens: &tokens{failAfter: 1, n: 1}} // the next Token fails
	if _, err := b.RoundTrip(request(t, "", true)); err == nil || !strings.Contains(err.Error(), "authenticating to cluster blue") {
		t.Errorf("RoundTrip without a token: %v", err)
	}
	if len(base.auth) != 0 {
		t.Errorf("%d requests sent without a token", len(base.auth))
	}
	refused := errors.New("connection refused")
	b = &bearer{base: &answers{err: refused}, cluster: "blue", tokens: &tokens{}}
	if _, err := b.RoundTrip(request(t, "", true)); !errors.Is(err, refused) {
		t.Errorf("RoundTrip error %v, want the transport's", err)
	}
}

func TestEndpointFailure(t *testing.T) {
	tests := map[string]struct {
		err  error
		want bool
	}{
		"unknown CA":      {x509.UnknownAuthorityError{}, true},
		"invalid cert":    {x509.CertificateInvalidError{}, true},
		"host name":       {x509.HostnameError{}, true},
		"verification":    {&tls.CertificateVerificationError{Err: errors.New("x")}, true},
		"not TLS":         {tls.RecordHeaderError{}, true},
		"no such host":    {&url.Error{Op: "Get", Err: &net.DNSError{Err: "no such host"}}, true},
		"dial refused":    {&net.OpError{Op: "dial", Err: os.ErrPermission}, true},
		"dial timeout":    {&net.OpError{Op: "dial", Err: os.ErrDeadlineExceeded}, false},
		"reset on read":   {&net.OpError{Op: "read", Err: os.ErrClosed}, false},
		"eof":             {io.ErrUnexpectedEOF, false},
		"cancelled":       {context.Canceled, false},
		"wrapped unknown": {fmt.Errorf("tls: %w", x509.UnknownAuthorityError{}), true},
	}
	for name, tt := range tests {
		if got := endpointFailure(tt.err); got != tt.want {
			t.Errorf("%s: endpointFailure(%v) = %v, want %v", name, tt.err, got, tt.want)
		}
	}
}

// The first endpoint failure checks the cluster (once per client); the
// FailureLimit-th in a row drops the client; an answer resets the count,
// and other errors do not count.
func TestWatchdogCounts(t *testing.T) {
	dial := &net.OpError{Op: "dial", Err: os.ErrPermission}
	tests := []struct {
		name          string
		errs          []error // nil: an answer
		checks, drops int
	}{
		{"one failure", []error{dial}, 1, 0},
		{"below the limit", []error{dial, dial}, 1, 0},
		{"at the limit", []error{dial, dial, dial}, 1, 1},
		{"past the limit", []error{dial, dial, dial, dial}, 1, 1},
		{"reset by an answer", []error{dial, dial, nil, dial, dial}, 1, 0},
		{"other errors", []error{context.Canceled, context.Canceled, context.Canceled}, 0, 0},
		{"twice the limit", []error{dial, dial, dial, nil, dial, dial, dial}, 1, 2},
	}
	for _, tt := range tests {
		var checks, drops int
		base := &scriptedRT{errs: tt.errs}
		w := &watchdog{base: base, check: func(context.Context) { checks++ }, drop: func() { drops++ }}
		for range tt.errs {
			req, _ := http.NewRequest(http.MethodGet, "https://k8s.example/api", nil)
			_, _ = w.RoundTrip(req)
		}
		if checks != tt.checks || drops != tt.drops {
			t.Errorf("%s: %d checks, %d drops; want %d, %d", tt.name, checks, drops, tt.checks, tt.drops)
		}
	}
}

type scriptedRT struct {
	errs []error
	i    int
}

func (s *scriptedRT) RoundTrip(req *http.Request) (*http.Response, error) {
	err := s.errs[s.i]
	s.i++
	if err != nil {
		return nil, err
	}
	return &http.Response{StatusCode: 200, Body: http.NoBody, Request: req}, nil
}
