package eks

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func awsConfig() aws.Config {
	return aws.Config{
		Region: "us-west-2",
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"}, nil
		}),
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// decode returns the presigned URL inside a token.
func decode(t *testing.T, tok Token) *url.URL {
	t.Helper()
	raw, ok := strings.CutPrefix(tok.Bearer(), "k8s-aws-v1.")
	if !ok {
		t.Fatalf("token lacks the k8s-aws-v1. prefix")
	}
	if strings.ContainsAny(raw, "=+/") {
		t.Errorf("token is not unpadded base64url")
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		t.Fatalf("decoding token: %v", err)
	}
	u, err := url.Parse(string(b))
	if err != nil {
		t.Fatalf("parsing presigned URL: %v", err)
	}
	return u
}

func TestTokenFormat(t *testing.T) {
	clk := newClock()
	s := NewSigner(awsConfig(), clk.Now)
	tok, err := s.Token(testCtx(t), "blue")
	if err != nil {
		t.Fatal(err)
	}
	u := decode(t, tok)
	q := u.Query()

	got := map[string]string{
		"scheme":     u.Scheme,
		"host":       u.Host,
		"path":       u.Path,
		"Action":     q.Get("Action"),
		"Version":    q.Get("Version"),
		"Expires":    q.Get("X-Amz-Expires"),
		"Date":       q.Get("X-Amz-Date"),
		"Algorithm":  q.Get("X-Amz-Algorithm"),
		"Credential": q.Get("X-Amz-Credential"),
	}
	want := map[string]string{
		"scheme":     "https",
		"host":       "sts.us-west-2.amazonaws.com",
		"path":       "/",
		"Action":     "GetCallerIdentity",
		"Version":    "2011-06-15",
		"Expires":    "60",
		"Date":       "20261122T100000Z",
		"Algorithm":  "AWS4-HMAC-SHA256",
		"Credential": "AKIDEXAMPLE/20261122/us-west-2/sts/aws4_request",
	}
	for k := range want {
		if got[k] != want[k] {
			t.Errorf("%s = %q, want %q", k, got[k], want[k])
		}
	}
	signed := strings.Split(q.Get("X-Amz-SignedHeaders"), ";")
	if !slices.Contains(signed, "host") || !slices.Contains(signed, "x-k8s-aws-id") {
		t.Errorf("X-Amz-SignedHeaders = %v, want host and x-k8s-aws-id", signed)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(q.Get("X-Amz-Signature")) {
		t.Errorf("X-Amz-Signature = %q, want 64 hex digits", q.Get("X-Amz-Signature"))
	}
	if !tok.SignedAt.Equal(clk.Now()) || !tok.Expires().Equal(clk.Now().Add(15*time.Minute)) {
		t.Errorf("SignedAt, Expires = %v, %v", tok.SignedAt, tok.Expires())
	}
}

func TestTokenDeterministic(t *testing.T) {
	clk := newClock()
	sign := func(cluster string) string {
		tok, err := NewSigner(awsConfig(), clk.Now).Token(testCtx(t), cluster)
		if err != nil {
			t.Fatal(err)
		}
		return tok.Bearer()
	}
	if a, b := sign("blue"), sign("blue"); a != b {
		t.Error("same clock, credentials and cluster gave different tokens")
	}
	sigOf := func(tok string) string {
		return decode(t, Token{value: &tok}).Query().Get("X-Amz-Signature")
	}
	if sigOf(sign("blue")) == sigOf(sign("green")) {
		t.Error("the cluster name does not change the signature: x-k8s-aws-id is not signed")
	}
}

func TestTokenRefresh(t *testing.T) {
	clk := newClock()
	s := NewSigner(awsConfig(), clk.Now)
	ctx := testCtx(t)
	first, err := s.Token(ctx, "blue")
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		advance time.Duration
		want    string // "same" or "new"
	}{
		{9*time.Minute + 59*time.Second, "same"},
		{time.Second, "new"}, // 10 minutes old: re-signed, 5 minutes before EKS would refuse it
	}
	for _, st := range steps {
		clk.Advance(st.advance)
		tok, err := s.Token(ctx, "blue")
		if err != nil {
			t.Fatal(err)
		}
		if got := map[bool]string{true: "same", false: "new"}[tok.Bearer() == first.Bearer()]; got != st.want {
			t.Errorf("at +%v: token %s, want %s", clk.Now().Sub(first.SignedAt), got, st.want)
		}
	}

	t.Run("invalidate", func(t *testing.T) {
		cur, _ := s.Token(ctx, "blue")
		s.Invalidate("blue", first) // stale: must not drop the current one
		if again, _ := s.Token(ctx, "blue"); again.SignedAt != cur.SignedAt {
			t.Error("invalidating a stale token dropped the current one")
		}
		clk.Advance(time.Second)
		s.Invalidate("blue", cur)
		if again, _ := s.Token(ctx, "blue"); again.Bearer() == cur.Bearer() {
			t.Error("invalidated token was served again")
		}
	})
}

func TestTokenNeverPrinted(t *testing.T) {
	tok, err := NewSigner(awsConfig(), newClock().Now).Token(testCtx(t), "blue")
	if err != nil {
		t.Fatal(err)
	}
	secret := strings.TrimPrefix(tok.Bearer(), "k8s-aws-v1.")[:24]

	var logged bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	log.Info("token", "token", tok, "wrapped", struct{ T Token }{tok}, "ptr", &tok)
	log.Debug("any", slog.Any("token", tok))
	asJSON, err := json.Marshal(map[string]any{"t": tok, "s": struct{ T Token }{tok}})
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{
		"slog json": logged.String(),
		"json":      string(asJSON),
		"fmt":       fmt.Sprintf("%v %+v %#v %s %q %x", tok, tok, tok, tok, tok, tok),
		"fmt struct": fmt.Sprintf("%v %+v %#v", struct{ T Token }{tok}, struct{ T Token }{tok},
			struct{ T Token }{tok}),
		"fmt unexported": fmt.Sprintf("%v %+v %#v", struct{ t Token }{tok}, struct{ t Token }{tok},
			struct{ t Token }{tok}),
	}
	for name, out := range outputs {
		if strings.Contains(out, secret) || strings.Contains(out, "k8s-aws-v1.") {
			t.Errorf("%s output contains the token: %s", name, out)
		}
		if !strings.Contains(out, redacted) && name != "fmt" && name != "fmt unexported" {
			t.Errorf("%s output lacks %s: %s", name, redacted, out)
		}
	}
}
