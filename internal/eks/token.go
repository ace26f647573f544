package eks

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Token lifetimes. EKS accepts a token for 15 minutes after it was signed
// (X-Amz-Date); X-Amz-Expires=60 is what aws-iam-authenticator sends and
// EKS ignores in favour of its own window. Re-signing after 10 minutes
// leaves a request 5 minutes to reach the API server.
const (
	tokenPrefix  = "k8s-aws-v1."
	clusterIDHdr = "x-k8s-aws-id"
	tokenValid   = 15 * time.Minute
	refreshAfter = 10 * time.Minute
)

const redacted = "[REDACTED]"

// Token is an EKS bearer token. It redacts itself wherever it might be
// printed or logged; Bearer is the only way to its value. The value sits
// behind a pointer so that even fmt printing a struct that holds a Token
// in an unexported field (where it can't call String) shows an address.
type Token struct {
	value    *string
	SignedAt time.Time
}

// Bearer returns the token's value for an Authorization header.
func (t Token) Bearer() string {
	if t.value == nil {
		return ""
	}
	return *t.value
}

// Expires returns when EKS stops accepting the token.
func (t Token) Expires() time.Time { return t.SignedAt.Add(tokenValid) }

// String redacts the token.
func (t Token) String() string { return redacted }

// GoString redacts the token from %#v.
func (t Token) GoString() string { return redacted }

// LogValue redacts the token from slog output.
func (t Token) LogValue() slog.Value {
	return slog.GroupValue(slog.String("value", redacted), slog.Time("signed_at", t.SignedAt))
}

// MarshalJSON redacts the token from JSON.
func (t Token) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// Signer makes EKS tokens: presigned STS GetCallerIdentity URLs bound to a
// cluster by the signed x-k8s-aws-id header, the format of
// aws-iam-authenticator. Presigning is local (no STS call, no IAM
// permission). Tokens are cached per cluster and re-signed after 10
// minutes or when Invalidate says the API server refused one.
type Signer struct {
	presign *sts.PresignClient
	now     func() time.Time

	mu    sync.Mutex
	cache map[string]Token
}

// NewSigner returns a Signer using cfg's region and credentials. The
// presigned URL always points at the regional STS endpoint, whatever
// BaseEndpoint cfg carries: it is EKS, not us, that calls it. now is the
// clock (time.Now when nil).
func NewSigner(cfg aws.Config, now func() time.Time) *Signer {
	if now == nil {
		now = time.Now
	}
	client := sts.NewFromConfig(cfg, func(o *sts.Options) { o.BaseEndpoint = nil })
	return &Signer{
		presign: sts.NewPresignClient(client, func(o *sts.PresignOptions) {
			o.Presigner = clockPresigner{signer: v4.NewSigner(), now: now}
		}),
		now:   now,
		cache: map[string]Token{},
	}
}

// Token returns a valid token for cluster, signing one when the cached one
// is older than 10 minutes.
func (s *Signer) Token(ctx context.Context, cluster string) (Token, error) {
	if cluster == "" {
		return Token{}, errors.New("signing token: empty cluster name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.cache[cluster]; ok && s.now().Sub(t.SignedAt) < refreshAfter {
		return t, nil
	}
	t, err := s.sign(ctx, cluster)
	if err != nil {
		return Token{}, err
	}
	s.cache[cluster] = t
	return t, nil
}

// Invalidate drops the cached token for cluster if it is still t, so the
// next Token call re-signs. Comparing with t keeps a burst of 401s from
// throwing away a token another request has just signed.
func (s *Signer) Invalidate(cluster string, t Token) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.cache[cluster]; ok && cur.Bearer() == t.Bearer() {
		delete(s.cache, cluster)
	}
}

func (s *Signer) sign(ctx context.Context, cluster string) (Token, error) {
	signedAt := s.now().UTC().Truncate(time.Second) // X-Amz-Date has seconds
	req, err := s.presign.PresignGetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}, func(o *sts.PresignOptions) {
		o.ClientOptions = append(o.ClientOptions, func(o *sts.Options) {
			o.APIOptions = append(o.APIOptions,
				smithyhttp.SetHeaderValue(clusterIDHdr, cluster),
				// The signer hoists X-Amz-* headers into the query.
				smithyhttp.SetHeaderValue("X-Amz-Expires", "60"),
			)
		})
	})
	if err != nil {
		return Token{}, fmt.Errorf("presigning sts:GetCallerIdentity for cluster %s: %w", cluster, err)
	}
	if req.Method != http.MethodGet {
		return Token{}, fmt.Errorf("presigning sts:GetCallerIdentity for cluster %s: got method %s, want GET", cluster, req.Method)
	}
	value := tokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(req.URL))
	return Token{value: &value, SignedAt: signedAt}, nil
}

// clockPresigner signs at the Signer's clock instead of the SDK's, so
// tokens are deterministic in tests and their age is known exactly.
type clockPresigner struct {
	signer *v4.Signer
	now    func() time.Time
}

func (p clockPresigner) PresignHTTP(ctx context.Context, creds aws.Credentials, r *http.Request, payloadHash, service, region string,
	_ time.Time, optFns ...func(*v4.SignerOptions)) (string, http.Header, error) {
	return p.signer.PresignHTTP(ctx, creds, r, payloadHash, service, region, p.now().UTC().Truncate(time.Second), optFns...)
}
