package awsfake

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// The static credentials Config and Env hand out; requests must be signed
// with them.
const (
	accessKeyID     = "AKIDFAKEFAKEFAKE"
	secretAccessKey = "fake-secret"
)

// signature is what verifySigV4 learnt of a request.
type signature struct {
	service string // the credential scope's service
	err     error  // nil when the signature is valid
}

// validFor reports a valid signature scoped to service, as AWS requires.
func (s signature) validFor(service string) bool { return s.err == nil && s.service == service }

// verifySigV4 checks r's SigV4 signature as AWS does: it signs a copy of
// the request (method, path, query, the headers the client signed, the
// body's own hash) with the fake's credentials at the request's time and
// compares. So a request signed with other credentials, for another
// region, or altered after signing fails. The clock skew is not checked.
func verifySigV4(r *http.Request, body []byte, secretOf func(accessKeyID string) (string, bool)) signature {
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return signature{err: errors.New("no AWS4-HMAC-SHA256 Authorization header")}
	}
	fields := map[string]string{}
	for _, f := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		fields[k] = v
	}
	scope := strings.Split(fields["Credential"], "/") // key/date/region/service/aws4_request
	if len(scope) != 5 || scope[2] != Region || scope[4] != "aws4_request" {
		return signature{err: fmt.Errorf("credential scope %q is not <key>/<date>/%s/<service>/aws4_request",
			fields["Credential"], Region)}
	}
	secret, known := secretOf(scope[0])
	if !known {
		return signature{err: fmt.Errorf("credential scope %q names an access key the fake does not know", fields["Credential"])}
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil || at.Format("20060102") != scope[1] {
		return signature{service: scope[3], err: fmt.Errorf("X-Amz-Date %q does not match the scope's date", r.Header.Get("X-Amz-Date"))}
	}
	u := *r.URL
	u.Scheme, u.Host = "http", r.Host
	req, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return signature{service: scope[3], err: err}
	}
	req.ContentLength = int64(len(body))
	for _, h := range strings.Split(fields["SignedHeaders"], ";") {
		if h != "host" && h != "content-length" {
			req.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: scope[0], SecretAccessKey: secret,
		SessionToken: r.Header.Get("X-Amz-Security-Token")}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), scope[3], scope[2], at); err != nil {
		return signature{service: scope[3], err: err}
	}
	if req.Header.Get("Authorization") != auth {
		return signature{service: scope[3], err: errors.New("the request signature does not match the one calculated with the test credentials")}
	}
	return signature{service: scope[3]}
}

// route names the service and action a request is for, as serve routes it.
func route(r *http.Request, body []byte) (service, action string) {
	if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/clusters/") {
		return ServiceEKS, "DescribeCluster"
	}
	if op, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), sqsTargetPrefix); ok {
		return ServiceSQS, op
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return "", ""
	}
	if service, action := routeMore(r, form); service != "" {
		return service, action
	}
	switch action = form.Get("Action"); action {
	case "DescribeInstances":
		return ServiceEC2, action
	case "CompleteLifecycleAction", "RecordLifecycleActionHeartbeat":
		return ServiceAutoScaling, action
	}
	return "", action
}

// refused answers a request AWS would refuse for its signature, in the
// service's own error format, records it unsigned, and reports whether it
// did. Requests for no known service are left to serve's own errors.
func (s *Server) refused(w http.ResponseWriter, r *http.Request, body []byte) bool {
	service, action := route(r, body)
	sig := verifySigV4(r, body, s.secretOf)
	if service == "" || sig.validFor(service) {
		return false
	}
	msg := fmt.Sprintf("The request signature we calculated does not match the signature you provided (awsfake: %v)", sig.err)
	if sig.err == nil {
		msg = fmt.Sprintf("Credential should be scoped to correct service: '%s' (awsfake: scoped to %q)", service, sig.service)
	}
	s.mu.Lock()
	s.calls = append(s.calls, Call{Service: service, Action: action, Time: time.Now()})
	s.mu.Unlock()
	switch service {
	case ServiceEC2:
		writeEC2Error(w, http.StatusUnauthorized, "AuthFailure", msg)
	case ServiceAutoScaling, ServiceSNS, ServiceCloudFormation:
		writeQueryError(w, http.StatusForbidden, "SignatureDoesNotMatch", msg)
	case ServiceEKS, ServiceLambda:
		writeJSONError(w, http.StatusForbidden, "InvalidSignatureException", msg)
	default:
		writeSQSError(w, http.StatusForbidden, "SignatureDoesNotMatch", msg)
	}
	return true
}

// AllowCredentials makes the fake accept requests signed with another key
// pair besides its own (e.g. a role's session credentials a test hands
// the function), as AWS accepts any valid identity.
func (s *Server) AllowCredentials(accessKeyID, secretAccessKey string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.extraKeys == nil {
		s.extraKeys = map[string]string{}
	}
	s.extraKeys[accessKeyID] = secretAccessKey
}

// secretOf returns the secret of a known access key.
func (s *Server) secretOf(id string) (string, bool) {
	if id == accessKeyID {
		return secretAccessKey, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	secret, ok := s.extraKeys[id]
	return secret, ok
}
