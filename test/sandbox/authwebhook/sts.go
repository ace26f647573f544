package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
)

// fakeSTS answers GetCallerIdentity on 127.0.0.1 for the identities it
// knows, after checking the request's SigV4 signature (see verify.go). It
// serves TLS with certificates it mints, per STS host name, from its own CA.
type fakeSTS struct {
	addr string
	ids  map[string]Identity // by access key id
	ca   *x509.Certificate
	key  *ecdsa.PrivateKey
	srv  *http.Server
	now  func() time.Time

	mu    sync.Mutex
	certs map[string]*tls.Certificate
}

func startSTS(ids []Identity) (*fakeSTS, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("fake STS key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sandbox fake STS CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(7 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("fake STS CA: %w", err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("fake STS CA: %w", err)
	}
	s := &fakeSTS{ids: map[string]Identity{}, ca: ca, key: key, now: time.Now, certs: map[string]*tls.Certificate{}}
	for _, id := range ids {
		s.ids[id.AccessKeyID] = id
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fake STS listener: %w", err)
	}
	s.addr = l.Addr().String()
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	tl := tls.NewListener(l, &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: s.certificate})
	go func() {
		if err := s.srv.Serve(tl); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logrus.WithError(err).Error("fake STS stopped")
		}
	}()
	return s, nil
}

func (s *fakeSTS) close() { _ = s.srv.Close() }

// isSTSHost reports whether host (no port) is an AWS STS endpoint name.
func isSTSHost(host string) bool {
	return strings.HasPrefix(host, "sts.") &&
		(strings.HasSuffix(host, ".amazonaws.com") || strings.HasSuffix(host, ".amazonaws.com.cn") || strings.HasSuffix(host, ".api.aws"))
}

// certificate mints a serving certificate for the STS host a client asks for.
func (s *fakeSTS) certificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	name := hello.ServerName
	if !isSTSHost(name) {
		return nil, fmt.Errorf("fake STS: no certificate for %q", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.certs[name]; ok {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("fake STS key for %s: %w", name, err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, fmt.Errorf("fake STS serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(7 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, s.ca, &key.PublicKey, s.key)
	if err != nil {
		return nil, fmt.Errorf("fake STS certificate for %s: %w", name, err)
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	s.certs[name] = c
	return c, nil
}

// transport sends requests for STS host names to the fake and refuses any
// other destination: the webhook has no business beyond loopback.
func (s *fakeSTS) transport() *http.Transport {
	pool := x509.NewCertPool()
	pool.AddCert(s.ca)
	var d net.Dialer
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil || !isSTSHost(host) {
				return nil, fmt.Errorf("sandbox webhook: refusing to dial %s (only STS is routed, to the fake)", addr)
			}
			return d.DialContext(ctx, network, s.addr)
		},
		TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: 5 * time.Second,
	}
}

// ServeHTTP answers GetCallerIdentity in the JSON form the verifier asks
// for (Accept: application/json), or an STS error.
func (s *fakeSTS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, code, err := s.verify(r)
	if err != nil {
		// The reason, never the request: its query is a bearer token.
		logrus.WithFields(logrus.Fields{"code": code, "reason": err.Error()}).Warn("fake STS refused GetCallerIdentity")
		status := http.StatusForbidden
		if code == "InvalidAction" || code == "MissingAuthenticationToken" {
			status = http.StatusBadRequest
		}
		writeSTS(w, status, map[string]any{"Error": map[string]string{"Code": code, "Message": err.Error(), "Type": "Sender"}, "RequestId": requestID()})
		return
	}
	writeSTS(w, http.StatusOK, map[string]any{"GetCallerIdentityResponse": map[string]any{
		"GetCallerIdentityResult": map[string]string{"Account": id.Account, "Arn": id.ARN, "UserId": id.UserID},
		"ResponseMetadata":        map[string]string{"RequestId": requestID()},
	}})
}

func writeSTS(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func requestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
