package live

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/test/awsfake"
)

// An https endpoint override with its CA from DRAINPIPE_CLUSTER_CAS needs
// no DescribeCluster: the client trusts that CA and nothing else.
func TestEndpointOverrideWithCA(t *testing.T) {
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"36","gitVersion":"v1.36.3"}`))
	}))
	defer api.Close()
	fake := awsfake.New()
	defer fake.Close()
	cfg := config.Default()
	cfg.Clusters = []string{"prod"}
	cfg.ClusterEndpoints = map[string]string{"prod": api.URL}
	cfg.ClusterCAs = map[string][]byte{"prod": pemOf(api.Certificate().Raw)}
	clusters, err := newClusters(cfg, fake.Config())
	if err != nil {
		t.Fatal(err)
	}
	client, err := clusters.Client(context.Background(), "prod")
	if err != nil {
		t.Fatalf("Client: %v", err)
	}
	if _, err := client.Discovery().ServerVersion(); err != nil {
		t.Errorf("ServerVersion through the override: %v", err)
	}
	if calls := fake.CallsTo("DescribeCluster"); len(calls) != 0 {
		t.Errorf("DescribeCluster called %d times, want none", len(calls))
	}
}

func pemOf(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
