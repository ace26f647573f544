package eks

import (
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A batch's first requests go out at once on a client no request has used
// yet: each used to dial a TLS connection of its own (ten per cold
// environment, each a handshake for the API server in a wave's busiest
// second) where one HTTP/2 connection carries them all.
func TestFreshClientDialsOnce(t *testing.T) {
	for i, mode := range []string{"eks", "kubeconfig"} {
		t.Run(mode, func(t *testing.T) {
			// A server each: client-go shares a transport between
			// clients of one server and CA.
			api, ctx, clients := bothClients(t)
			var wg sync.WaitGroup
			for range 10 {
				wg.Go(func() {
					if _, err := clients[i].CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{}); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if n := api.conns.Load(); n != 1 {
				t.Errorf("10 requests at once on a fresh client opened %d connections, want 1", n)
			}
		})
	}
}
