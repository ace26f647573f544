package fleet_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/test/fleet"
)

// TestEndpointProxyClose: the proxy passes TLS through (the client
// trusts the server's own certificate), and Close refuses new
// connections and cuts open ones, as a deleted cluster's endpoint does.
func TestEndpointProxyClose(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	p, err := fleet.StartEndpointProxy(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	hc := srv.Client()
	resp, err := hc.Get(p.URL())
	if err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ok" || p.Accepted() != 1 {
		t.Fatalf("through the proxy: body %q, %d connections accepted; want ok, 1", body, p.Accepted())
	}
	open, err := net.Dial("tcp", strings.TrimPrefix(p.URL(), "https://"))
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// The open connection is cut: a read ends at once (the deadline only
	// bounds a failure of the test).
	_ = open.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := open.Read(make([]byte, 1)); err == nil || errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		t.Errorf("read on a connection open at Close = %v, want it cut", err)
	}
	if _, err := hc.Get(p.URL()); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("request after Close: %v, want connection refused", err)
	}
	if _, err := fleet.StartEndpointProxy("https://example.com:443"); err == nil {
		t.Error("a proxy to a non-loopback endpoint started")
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
