package kubewire

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// On HTTP/2 a fresh client's other requests go as soon as the first has
// its connection, on that connection: they no longer wait for the first's
// answer, a whole round trip of the API server in a wave's busiest second.
// The server here answers the first only once a second request has come.
func TestOthersGoOnceTheConnectionIsUp(t *testing.T) {
	var conns atomic.Int32
	firstIn, second := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/first" {
			close(firstIn)
			select {
			case <-second:
			case <-r.Context().Done():
			}
			return
		}
		once.Do(func() { close(second) })
	}))
	srv.EnableHTTP2 = true
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	rt := oneDialFirst(srv.Client().Transport)

	// A guard, not a measure: without the change the first is never
	// answered, as no second comes while it is out.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, path := range []string{"/first", "/second", "/third"} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		if path != "/first" {
			<-firstIn // the others come once the first is out
		}
		wg.Go(func() {
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Errorf("%s: %v", path, err)
				return
			}
			_ = resp.Body.Close()
		})
	}
	wg.Wait()
	select {
	case <-second:
	default:
		t.Fatal("the other requests waited for the first's answer; want them on its connection once it was up")
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("three requests on a fresh client opened %d connections, want 1", n)
	}
}
