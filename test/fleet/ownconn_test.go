package fleet

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The observer's node watch must not queue behind its pod watch on one
// HTTP/2 connection: clients made with OwnConnection dial their own,
// where two ordinary clients of one config share one.
func TestOwnConnection(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Node","apiVersion":"v1","metadata":{"name":"n"}}`))
	}))
	srv.EnableHTTP2 = true
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	get := func(c kubernetes.Interface) {
		if _, err := c.CoreV1().Nodes().Get(t.Context(), "n", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		make func(*rest.Config) (kubernetes.Interface, error)
		want int32
	}{
		{"shared", func(c *rest.Config) (kubernetes.Interface, error) { return kubernetes.NewForConfig(c) }, 1},
		{"own", OwnConnection, 2},
	} {
		conns.Store(0)
		srv.CloseClientConnections()
		for range 2 {
			c, err := tc.make(cfg)
			if err != nil {
				t.Fatal(err)
			}
			get(c)
		}
		if got := conns.Load(); got != tc.want {
			t.Errorf("%s: two clients opened %d connections, want %d", tc.name, got, tc.want)
		}
	}
}
