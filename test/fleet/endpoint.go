package fleet

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// EndpointProxy is a TCP pass-through on 127.0.0.1 to a cluster's API
// server: a second address for the same control plane, standing for an
// earlier incarnation of a cluster recreated under the same name. TLS
// passes through untouched, so clients trust the cluster's CA (its
// certificate names 127.0.0.1, whatever the port) and the proxy never
// sees a token. Close is the incarnation's deletion: new connections are
// refused and open ones cut.
type EndpointProxy struct {
	ln       net.Listener
	target   string
	accepted atomic.Int64
	wg       sync.WaitGroup

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
}

// StartEndpointProxy listens on 127.0.0.1 and forwards every connection
// to endpoint (an https URL on loopback, such as EKSCluster.Endpoint).
func StartEndpointProxy(endpoint string) (*EndpointProxy, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("parsing endpoint %q: %w", endpoint, err)
	}
	if ip := net.ParseIP(u.Hostname()); u.Scheme != "https" || ip == nil || !ip.IsLoopback() || u.Port() == "" {
		return nil, fmt.Errorf("endpoint %q: want https://<loopback address>:<port>", endpoint)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the endpoint proxy: %w", err)
	}
	p := &EndpointProxy{ln: ln, target: u.Host, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// URL is the proxy's endpoint, what DescribeCluster answers for the old
// incarnation.
func (p *EndpointProxy) URL() string { return "https://" + p.ln.Addr().String() }

// Accepted counts the connections the proxy has accepted.
func (p *EndpointProxy) Accepted() int { return int(p.accepted.Load()) }

// Close stops listening (the port then refuses connections), cuts every
// open connection and returns once every goroutine of the proxy is done.
func (p *EndpointProxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	err := p.ln.Close()
	for c := range p.conns {
		_ = c.Close() // cut: the other side sees a reset or EOF
	}
	p.mu.Unlock()
	p.wg.Wait()
	if err != nil {
		return fmt.Errorf("closing the endpoint proxy: %w", err)
	}
	return nil
}

func (p *EndpointProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil { // closed; any other failure ends serving too, and shows as refused connections
			return
		}
		p.accepted.Add(1)
		p.wg.Add(1) // the counter is positive: serve itself holds one
		go p.pipe(c)
	}
}

// pipe copies both ways until either side ends, then closes both.
func (p *EndpointProxy) pipe(client net.Conn) {
	defer p.wg.Done()
	defer client.Close()
	if !p.track(client) {
		return
	}
	defer p.untrack(client)
	server, err := (&net.Dialer{Timeout: 10 * time.Second}).Dial("tcp", p.target)
	if err != nil {
		return // the client sees its connection closed
	}
	defer server.Close()
	if !p.track(server) {
		return
	}
	defer p.untrack(server)
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(server, client)
		_ = server.Close()
		close(done)
	}()
	_, _ = io.Copy(client, server)
	_ = client.Close()
	<-done
}

// track registers c for Close to cut; false when the proxy is closed.
func (p *EndpointProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *EndpointProxy) untrack(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
}
