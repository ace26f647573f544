package sandbox

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/drainpipe/drainpipe/internal/eks"
)

// TestWebhookReviewsTokens asks the webhook alone (no API server) to review
// tokens, as kube-apiserver does: Drainpipe's and aws-iam-authenticator's
// own for the mapped role pass as user and group drainpipe; a token for
// another cluster, an expired one and an unmapped role's are refused, and
// the webhook's log says why.
func TestWebhookReviewsTokens(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the webhook binary; skipped with -short")
	}
	bin := DefaultBinDir(os.Getenv)
	if _, err := os.Stat(filepath.Join(bin, webhookBinary)); err != nil {
		t.Fatalf("%v: run make sandbox-build", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s := &Sandbox{dir: t.TempDir(), binDir: bin, log: slog.New(slog.DiscardHandler), launch: newLauncher()}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	logs := filepath.Join(s.dir, "logs")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		t.Fatal(err)
	}
	claim, err := claimPorts(portLockDir(), portLow, portHigh, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(claim.release)
	ports := claim.ports
	const cluster = "review-test"
	kubeconfig, err := s.startWebhook(ctx, Options{EKSAuth: &EKSAuth{Cluster: cluster}}, s.runner(bin, logs, false), ports[0], "https://127.0.0.1:1", nil)
	if err != nil {
		t.Fatal(err)
	}
	review := reviewer(t, kubeconfig)
	c, _ := s.EKS()

	sign := func(id AWSIdentity, name string, skew time.Duration) string {
		cfg := aws.Config{Region: "us-west-2", Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: id.AccessKeyID, SecretAccessKey: id.SecretAccessKey, SessionToken: id.SessionToken}, nil
		})}
		tok, err := eks.NewSigner(cfg, func() time.Time { return time.Now().Add(skew) }).Token(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return tok.Bearer()
	}
	upstream, err := s.UpstreamToken(ctx, cluster, "us-west-2", c.Function)
	if err != nil {
		t.Fatal(err)
	}
	// Signed at the same second, the two generators agree to the byte.
	at, err := time.Parse("20060102T150405Z", presignedURL(t, upstream).Query().Get("X-Amz-Date"))
	if err != nil {
		t.Fatalf("upstream token's X-Amz-Date: %v", err)
	}
	if ours := sign(c.Function, cluster, at.Sub(time.Now())); ours != upstream {
		t.Errorf("tokens signed at %s differ:\n upstream  %s\n drainpipe %s", at, redact(presignedURL(t, upstream)), redact(presignedURL(t, ours)))
	}
	for _, tc := range []struct {
		name, token, wantUser, wantLog string
	}{
		{"drainpipe's token", sign(c.Function, cluster, 0), DrainpipeGroup, ""},
		{"aws-iam-authenticator's token", upstream, DrainpipeGroup, ""},
		{"another cluster's token", sign(c.Function, "other-cluster", 0), "", "SignatureDoesNotMatch"},
		{"expired token", sign(c.Function, cluster, -16*time.Minute), "", "X-Amz-Date parameter is expired"},
		{"unmapped role", sign(c.Unmapped, cluster, 0), "", "identity is not mapped"},
	} {
		user, groups := review(ctx, tc.token)
		if user != tc.wantUser || (tc.wantUser != "" && strings.Join(groups, ",") != DrainpipeGroup) {
			t.Errorf("%s: reviewed as user %q groups %v, want %q", tc.name, user, groups, tc.wantUser)
		}
		if tc.wantLog != "" && !strings.Contains(tail(filepath.Join(logs, webhookBinary+".log"), 4), tc.wantLog) {
			t.Errorf("%s: the webhook's log does not say %q", tc.name, tc.wantLog)
		}
	}
}

// reviewer posts TokenReviews to the webhook named by an API server's
// webhook kubeconfig and returns the user (empty when refused).
func reviewer(t *testing.T, kubeconfig string) func(context.Context, string) (string, []string) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: rt, Timeout: 20 * time.Second}
	return func(ctx context.Context, token string) (string, []string) {
		body, _ := json.Marshal(map[string]any{"apiVersion": "authentication.k8s.io/v1beta1", "kind": "TokenReview", "spec": map[string]string{"token": token}})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.Host, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r struct {
			Status struct {
				Authenticated bool
				User          struct {
					Username string
					Groups   []string
				}
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			t.Fatalf("decoding review (%s): %v", resp.Status, err)
		}
		if !r.Status.Authenticated {
			return "", nil
		}
		return r.Status.User.Username, r.Status.User.Groups
	}
}

// presignedURL decodes a token.
func presignedURL(t *testing.T, token string) *url.URL {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(token, "k8s-aws-v1."))
	if err != nil {
		t.Fatalf("decoding token: %v", err)
	}
	u, err := url.Parse(string(raw))
	if err != nil {
		t.Fatalf("parsing presigned URL: %v", err)
	}
	return u
}

// redact drops a presigned URL's signature and session token.
func redact(u *url.URL) string {
	q := u.Query()
	q.Del("X-Amz-Signature")
	q.Del("X-Amz-Security-Token")
	return u.Host + u.Path + "?" + q.Encode()
}
