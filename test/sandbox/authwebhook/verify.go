package main

import (
	"crypto/hmac"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// presignWindow is how long STS (and so EKS) accepts a presigned
// GetCallerIdentity after its X-Amz-Date, whatever X-Amz-Expires says.
const presignWindow = 15 * time.Minute

// emptySHA256 is the payload hash of a presigned GET.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// verify checks a presigned GetCallerIdentity as STS does and returns the
// caller, or an STS error code and reason. The signature is recomputed
// over the request as received: the verifier sets x-k8s-aws-id to its own
// cluster name, so a token signed for another cluster fails here, and only
// here.
func (s *fakeSTS) verify(r *http.Request) (Identity, string, error) {
	q := r.URL.Query()
	if r.Method != http.MethodGet || q.Get("Action") != "GetCallerIdentity" || q.Get("Version") != "2011-06-15" {
		return Identity{}, "InvalidAction", errors.New("only a presigned GET of GetCallerIdentity (2011-06-15) is served")
	}
	if q.Get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256" || q.Get("X-Amz-Signature") == "" {
		return Identity{}, "MissingAuthenticationToken", errors.New("request is not signed with AWS4-HMAC-SHA256")
	}
	scope := strings.Split(q.Get("X-Amz-Credential"), "/")
	if len(scope) != 5 || scope[3] != "sts" || scope[4] != "aws4_request" {
		return Identity{}, "IncompleteSignature", errors.New("malformed credential scope")
	}
	id, ok := s.ids[scope[0]]
	if !ok || subtle.ConstantTimeCompare([]byte(q.Get("X-Amz-Security-Token")), []byte(id.SessionToken)) != 1 {
		return Identity{}, "InvalidClientTokenId", errors.New("the security token included in the request is invalid")
	}
	signedAt, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	if err != nil {
		return Identity{}, "IncompleteSignature", fmt.Errorf("bad X-Amz-Date: %w", err)
	}
	if scope[1] != signedAt.Format("20060102") {
		return Identity{}, "SignatureDoesNotMatch", errors.New("credential scope date differs from X-Amz-Date")
	}
	if want := hostRegion(r.Host); scope[2] != want {
		return Identity{}, "SignatureDoesNotMatch", fmt.Errorf("credential scoped to region %s, endpoint is %s", scope[2], want)
	}
	now := s.now()
	if now.After(signedAt.Add(presignWindow)) {
		return Identity{}, "ExpiredToken", fmt.Errorf("request has expired (signed %s)", signedAt.Format(time.RFC3339))
	}
	if signedAt.After(now.Add(5 * time.Minute)) {
		return Identity{}, "SignatureDoesNotMatch", errors.New("signature not yet current")
	}
	want, signedHeaders, err := resign(r, q, id, scope[2], signedAt)
	if err != nil {
		return Identity{}, "SignatureDoesNotMatch", err
	}
	if signedHeaders != q.Get("X-Amz-SignedHeaders") || !hmac.Equal([]byte(want), []byte(q.Get("X-Amz-Signature"))) {
		return Identity{}, "SignatureDoesNotMatch", errors.New("the request signature we calculated does not match the signature you provided")
	}
	return id, "", nil
}

// resign presigns the received request again with the caller's secret key
// and returns the signature and signed-header list that yields.
func resign(r *http.Request, q url.Values, id Identity, region string, signedAt time.Time) (sig, signedHeaders string, err error) {
	unsigned := url.Values{}
	for k, v := range q {
		switch k {
		case "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-SignedHeaders", "X-Amz-Signature", "X-Amz-Security-Token":
		default:
			unsigned[k] = v
		}
	}
	u := url.URL{Scheme: "https", Host: r.Host, Path: r.URL.Path, RawQuery: unsigned.Encode()}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, u.String(), nil)
	if err != nil {
		return "", "", fmt.Errorf("rebuilding request: %w", err)
	}
	for _, h := range strings.Split(q.Get("X-Amz-SignedHeaders"), ";") {
		if h == "host" {
			continue
		}
		vals := r.Header.Values(h)
		if len(vals) == 0 {
			return "", "", fmt.Errorf("signed header %s is missing from the request", h)
		}
		req.Header[http.CanonicalHeaderKey(h)] = vals
	}
	creds := aws.Credentials{AccessKeyID: id.AccessKeyID, SecretAccessKey: id.SecretAccessKey, SessionToken: id.SessionToken}
	signed, _, err := v4.NewSigner().PresignHTTP(r.Context(), creds, req, emptySHA256, "sts", region, signedAt)
	if err != nil {
		return "", "", fmt.Errorf("signing: %w", err)
	}
	su, err := url.Parse(signed)
	if err != nil {
		return "", "", fmt.Errorf("parsing signed URL: %w", err)
	}
	return su.Query().Get("X-Amz-Signature"), su.Query().Get("X-Amz-SignedHeaders"), nil
}

// hostRegion is the signing region of an STS host name: the global
// endpoint signs for us-east-1.
func hostRegion(host string) string {
	if h, _, ok := strings.Cut(host, ":"); ok {
		host = h
	}
	parts := strings.Split(host, ".")
	if len(parts) < 4 || parts[1] == "amazonaws" {
		return "us-east-1"
	}
	return parts[1]
}
