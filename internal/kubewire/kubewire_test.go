package kubewire

import (
	"context"
	"errors"
	"net/http"
	"testing"
)

// blocking answers once release is closed, counting the requests it saw.
type blocking struct {
	release chan struct{}
	seen    chan *http.Request
}

func (b blocking) RoundTrip(r *http.Request) (*http.Response, error) {
	b.seen <- r
	<-b.release
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
}

// Until the first request has its answer, the others wait (their own
// context still ends the wait); then they go.
func TestFirstRequestGoesAlone(t *testing.T) {
	base := blocking{release: make(chan struct{}), seen: make(chan *http.Request, 3)}
	rt := oneDialFirst(base)
	first := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "https://api.example/1", nil)
		_, err := rt.RoundTrip(req)
		first <- err
	}()
	<-base.seen // the first is on its way

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://api.example/2", nil)
	if _, err := rt.RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Errorf("a request whose context ended while the first was out: err %v, want context.Canceled", err)
	}
	second := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "https://api.example/3", nil)
		_, err := rt.RoundTrip(req)
		second <- err
	}()
	select {
	case r := <-base.seen:
		t.Fatalf("request %s went out before the first was answered", r.URL)
	case <-first:
		t.Fatal("the first request was answered before its transport released it")
	default:
	}
	close(base.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if r := <-base.seen; r.URL.Path != "/3" {
		t.Errorf("after the first, %s went out; want /3", r.URL)
	}
}
