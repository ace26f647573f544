package eks

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
)

// FailureLimit is how many TLS or connection failures in a row make a
// cluster's cached endpoint, CA and client be dropped, whatever
// DescribeCluster says: a cluster recreated under the same name has a new
// endpoint and CA, which only DescribeCluster can tell.
const FailureLimit = 3

// watchdog counts a client's consecutive endpoint failures and calls drop
// once they reach FailureLimit. The client's first failure calls check
// (once per client), which drops it at once if the cluster's description
// changed: a lone message after a recreation would otherwise spend
// FailureLimit deliveries (maybe all it has) before the endpoint is
// described again. Any HTTP answer, error status included, proves the
// endpoint and CA right and resets the count.
type watchdog struct {
	base     http.RoundTripper
	failures atomic.Int32
	checked  atomic.Bool
	check    func(context.Context)
	drop     func()
}

func (w *watchdog) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.base.RoundTrip(req)
	if err == nil {
		w.failures.Store(0)
	} else if endpointFailure(err) {
		if w.failures.Add(1) == FailureLimit {
			w.drop()
		} else if w.checked.CompareAndSwap(false, true) {
			// In line, before the caller sees the error, so its next
			// Client already has the new endpoint.
			w.check(req.Context())
		}
	}
	return resp, err
}

// endpointFailure reports whether err says the endpoint or its CA is
// wrong: a certificate not trusted or not matching, or no connection at
// all. A cancelled or timed-out request says nothing about the endpoint,
// nor does a connection lost once made (a reset or EOF: the API server
// restarting, a GOAWAY): the endpoint was right, and client-go retries
// such a request, each attempt passing here, so one request once counted
// up to FailureLimit failures.
func endpointFailure(err error) bool {
	var (
		unknownCA  x509.UnknownAuthorityError
		invalid    x509.CertificateInvalidError
		hostname   x509.HostnameError
		verify     *tls.CertificateVerificationError
		header     tls.RecordHeaderError
		opErr      *net.OpError
		dnsErr     *net.DNSError
		netTimeout net.Error
	)
	switch {
	case errors.As(err, &unknownCA), errors.As(err, &invalid), errors.As(err, &hostname),
		errors.As(err, &verify), errors.As(err, &header), errors.As(err, &dnsErr):
		return true
	case errors.As(err, &netTimeout) && netTimeout.Timeout():
		return false
	case errors.As(err, &opErr):
		return opErr.Op == "dial"
	}
	return false
}
