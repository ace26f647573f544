package config

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"github.com/drainpipe/drainpipe/internal/eks"
)

// checkEndpointURL accepts https, and http on loopback only (a local
// proxy): the requests carry a bearer token that must not cross a network
// in clear. internal/eks's rule, checked at start-up so a bad
// value fails the deployment instead of every record.
func checkEndpointURL(name, endpoint string) error {
	if err := eks.CheckEndpoint(endpoint); err != nil {
		return fmt.Errorf("endpoint for %q: %w", name, err)
	}
	return nil
}

// parseCAs reads name=<base64 PEM>,... (the encoding of EKS's
// certificateAuthority.data); every value must hold a certificate.
func parseCAs(v string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, pair := range strings.Split(v, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		name, b64, ok := strings.Cut(pair, "=")
		if !ok || !clusterName.MatchString(name) {
			return nil, errors.New("want name=<base64 PEM> pairs")
		}
		data, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, fmt.Errorf("CA of %q is not base64: %w", name, err)
		}
		if err := checkPEM(data); err != nil {
			return nil, fmt.Errorf("CA of %q: %w", name, err)
		}
		out[name] = data
	}
	return out, nil
}

func checkPEM(data []byte) error {
	found := false
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("parsing certificate: %w", err)
		}
		found = true
	}
	if !found {
		return errors.New("no PEM certificate")
	}
	return nil
}

// checkCAClusters requires an https endpoint override for every CA: without
// one the endpoint, and its CA, come from EKS.
func checkCAClusters(endpoints map[string]string, cas map[string][]byte) error {
	for name := range cas {
		if !strings.HasPrefix(endpoints[name], "https://") {
			return fmt.Errorf("CA for cluster %q, which has no https endpoint in %sCLUSTER_ENDPOINTS", name, Prefix)
		}
	}
	return nil
}
