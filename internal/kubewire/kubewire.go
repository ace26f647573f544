// Package kubewire is how Drainpipe's Kubernetes clients talk to an API
// server, in EKS and kubeconfig mode alike: protobuf, one connection
// dialed before a fresh client's first requests go at once, the version
// in the User-Agent, the configured rate limits.
package kubewire

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/drainpipe/drainpipe/internal/version"
)

// accepts asks for protobuf, the wire format of Kubernetes' built-in types
// that its own components use: it costs the API server less CPU than JSON
// (docs/performance.md#why-the-constants-are-what-they-are), and a wave
// sends thousands of requests to a control plane every tenant shares. JSON stays acceptable, for a server (or proxy) that does
// not speak protobuf; patches go in their own JSON formats whatever
// ContentType says.
const accepts = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON

// Tune sets what every Drainpipe client to a cluster shares: its rate
// limits, its User-Agent (the version, for the audit log), protobuf, and
// one connection dialed before its first requests go at once.
func Tune(rc *rest.Config, qps float32, burst int) {
	rc.QPS, rc.Burst, rc.UserAgent = qps, burst, version.Get().UserAgent()
	rc.ContentType, rc.AcceptContentTypes = runtime.ContentTypeProtobuf, accepts
	rc.Wrap(oneDialFirst)
}

// firstAlone holds a fresh client's requests until its first has its
// connection. Go's transport dials a connection for every request that
// finds none, so a batch's first ten requests, all at once, opened ten
// TLS connections: ten handshakes for the API server in a wave's busiest
// second, where one HTTP/2 connection carries them all. On HTTP/2 the
// others go as soon as that connection is up, not after the first's
// answer: a round trip of a loaded API server before a batch's other
// cordons. On HTTP/1 each
// request needs a connection of its own, and the others wait for the
// first's answer to reuse its connection.
type firstAlone struct {
	base  http.RoundTripper
	taken atomic.Bool
	once  sync.Once
	done  chan struct{} // closed once the first request has its HTTP/2 connection or its answer
}

func oneDialFirst(rt http.RoundTripper) http.RoundTripper {
	return &firstAlone{base: rt, done: make(chan struct{})}
}

func (f *firstAlone) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.taken.CompareAndSwap(false, true) {
		defer f.release()
		trace := &httptrace.ClientTrace{GotConn: func(c httptrace.GotConnInfo) {
			if multiplexed(c.Conn) {
				f.release()
			}
		}}
		return f.base.RoundTrip(r.WithContext(httptrace.WithClientTrace(r.Context(), trace)))
	}
	select {
	case <-f.done:
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	return f.base.RoundTrip(r)
}

func (f *firstAlone) release() { f.once.Do(func() { close(f.done) }) }

// multiplexed reports a connection that speaks HTTP/2 (negotiated in its
// TLS handshake), on which the transport sends the other requests too.
func multiplexed(c net.Conn) bool {
	tc, ok := c.(interface{ ConnectionState() tls.ConnectionState })
	return ok && tc.ConnectionState().NegotiatedProtocol == "h2"
}

// WrappedRoundTripper lets client-go reach the transport beneath.
func (f *firstAlone) WrappedRoundTripper() http.RoundTripper { return f.base }
