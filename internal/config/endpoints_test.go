package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

// A bearer token must not cross a network in clear: a plain-http endpoint
// override is refused at start-up unless it is on loopback.
func TestClusterEndpointSchemes(t *testing.T) {
	for endpoint, ok := range map[string]bool{
		"https://10.0.0.1:6443":  true,
		"http://127.0.0.1:8001":  true,
		"http://[::1]:8001":      true,
		"http://localhost:8001":  true,
		"http://10.0.0.1:8080":   false,
		"http://api.example.com": false,
	} {
		_, err := Load(env(map[string]string{
			"DRAINPIPE_CLUSTERS":          "prod",
			"DRAINPIPE_CLUSTER_ENDPOINTS": "prod=" + endpoint,
		}))
		if (err == nil) != ok {
			t.Errorf("endpoint %s: Load error = %v, want ok=%v", endpoint, err, ok)
		}
	}
}

// DRAINPIPE_CLUSTER_CAS gives an https override its CA, so EKS need not be
// asked; only valid certificates for clusters with an https override pass.
func TestClusterCAs(t *testing.T) {
	ca := base64.StdEncoding.EncodeToString(testCA(t))
	c, err := Load(env(map[string]string{
		"DRAINPIPE_CLUSTERS":          "prod,staging",
		"DRAINPIPE_CLUSTER_ENDPOINTS": "prod=https://10.0.0.1:6443",
		"DRAINPIPE_CLUSTER_CAS":       "prod=" + ca,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if got := base64.StdEncoding.EncodeToString(c.ClusterCAs["prod"]); got != ca || len(c.ClusterCAs) != 1 {
		t.Errorf("ClusterCAs = %q, want prod's PEM", c.ClusterCAs)
	}
	for name, value := range map[string]string{
		"not base64":         "prod=%%%",
		"not a certificate":  "prod=" + base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")),
		"no endpoint for it": "staging=" + ca,
		"not name=CA":        ca,
	} {
		_, err := Load(env(map[string]string{
			"DRAINPIPE_CLUSTERS":          "prod,staging",
			"DRAINPIPE_CLUSTER_ENDPOINTS": "prod=https://10.0.0.1:6443",
			"DRAINPIPE_CLUSTER_CAS":       value,
		}))
		if err == nil || !strings.Contains(err.Error(), "DRAINPIPE_CLUSTER_CAS") {
			t.Errorf("%s: Load error = %v, want a DRAINPIPE_CLUSTER_CAS error", name, err)
		}
	}
}

func testCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
