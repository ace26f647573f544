package instance

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRouterCluster(t *testing.T) {
	two := []string{"blue", "green"}
	tests := []struct {
		name        string
		clusters    []string
		requiredTag string
		tags        map[string]string
		wantCluster string
		wantReason  Reason
	}{
		{"eks tag", two, "", map[string]string{"eks:cluster-name": "green"}, "green", ""},
		{"aws eks tag", two, "", map[string]string{"aws:eks:cluster-name": "blue"}, "blue", ""},
		{"kubernetes.io tag", two, "", map[string]string{"kubernetes.io/cluster/green": "owned"}, "green", ""},
		{"first configured among several tags", two, "", map[string]string{
			"eks:cluster-name": "red", "kubernetes.io/cluster/blue": "shared"}, "blue", ""},
		{"foreign cluster", two, "", map[string]string{"eks:cluster-name": "red"}, "", ReasonForeignCluster},
		{"foreign cluster with one configured", []string{"blue"}, "", map[string]string{"kubernetes.io/cluster/red": "owned"}, "", ReasonForeignCluster},
		{"untagged, one cluster configured", []string{"blue"}, "", nil, "blue", ""},
		{"untagged, two clusters configured", two, "", nil, "", ReasonNoCluster},
		{"untagged, none configured", nil, "", nil, "", ReasonNoCluster},
		{"required key present", []string{"blue"}, "drainpipe", map[string]string{"drainpipe": "x"}, "blue", ""},
		{"required key missing", []string{"blue"}, "drainpipe", map[string]string{"other": "x"}, "", ReasonMissingTag},
		{"required value matches", two, "team=infra", map[string]string{"team": "infra", "eks:cluster-name": "blue"}, "blue", ""},
		{"required value differs", two, "team=infra", map[string]string{"team": "web", "eks:cluster-name": "blue"}, "", ReasonMissingTag},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewRouter(tt.clusters, tt.requiredTag)
			if err != nil {
				t.Fatal(err)
			}
			cluster, reason := r.Cluster(Instance{ID: "i-0123456789abcdef0", Tags: tt.tags})
			if cluster != tt.wantCluster || reason != tt.wantReason {
				t.Errorf("Cluster() = (%q, %q), want (%q, %q)", cluster, reason, tt.wantCluster, tt.wantReason)
			}
		})
	}
}

func TestRouterRouteNotFound(t *testing.T) {
	r, err := NewRouter([]string{"blue"}, "")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]Instance{"i-0123456789abcdef0": {ID: "i-0123456789abcdef0"}}
	if _, why := r.Route(found, "i-0fffffffffffffff0"); why != ReasonNotFound {
		t.Errorf("Route(missing) reason = %q, want %q", why, ReasonNotFound)
	}
	got, why := r.Route(found, "i-0123456789abcdef0")
	if why != "" || got.Cluster != "blue" {
		t.Errorf("Route(found) = (%+v, %q), want cluster blue", got, why)
	}
}

func TestNewRouterRejects(t *testing.T) {
	for _, tt := range []struct {
		name     string
		clusters []string
		tag      string
	}{
		{"empty cluster", []string{"blue", " "}, ""},
		{"empty tag key", []string{"blue"}, "=value"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewRouter(tt.clusters, tt.tag); err == nil {
				t.Error("NewRouter() error = nil, want one")
			}
		})
	}
}

func TestTaggedClusters(t *testing.T) {
	got := TaggedClusters(map[string]string{
		"kubernetes.io/cluster/zeta":  "owned",
		"kubernetes.io/cluster/alpha": "owned",
		"aws:eks:cluster-name":        "main",
		"eks:cluster-name":            "main",
	})
	if diff := cmp.Diff([]string{"main", "alpha", "zeta"}, got); diff != "" {
		t.Errorf("TaggedClusters() mismatch (-want +got):\n%s", diff)
	}
}
