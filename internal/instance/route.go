package instance

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Reason says why an instance is ignored. The empty Reason means it is not.
type Reason string

// Reasons an instance is ignored. Their values appear in logs.
const (
	ReasonNotFound       Reason = "instance-not-found"
	ReasonNoCluster      Reason = "no-configured-cluster"
	ReasonMissingTag     Reason = "missing-required-tag"
	ReasonForeignCluster Reason = "foreign-cluster"
)

// Tags naming an instance's cluster, in order of precedence. EKS managed
// node groups set the first two; kubernetes.io/cluster/<name> is set by
// eksctl, Karpenter and most self-managed templates.
const (
	tagClusterName    = "eks:cluster-name"
	tagAWSClusterName = "aws:eks:cluster-name"
	tagClusterPrefix  = "kubernetes.io/cluster/"
)

// Router decides which configured cluster an instance belongs to.
type Router struct {
	clusters []string
	tagKey   string
	tagValue string // "" means any value
}

// NewRouter returns a Router for the configured clusters. requiredTag is
// "", "key" (the tag must exist) or "key=value" (it must have that value).
func NewRouter(clusters []string, requiredTag string) (Router, error) {
	r := Router{}
	for _, c := range clusters {
		c = strings.TrimSpace(c)
		if c == "" {
			return Router{}, errors.New("parsing clusters: empty cluster name")
		}
		if !slices.Contains(r.clusters, c) {
			r.clusters = append(r.clusters, c)
		}
	}
	if requiredTag != "" {
		key, value, _ := strings.Cut(requiredTag, "=")
		if key = strings.TrimSpace(key); key == "" {
			return Router{}, fmt.Errorf("parsing required tag %q: empty key", requiredTag)
		}
		r.tagKey, r.tagValue = key, value
	}
	return r, nil
}

// Route returns the cluster of the instance with the given ID among found
// (a Describe result), or why the instance is ignored.
func (r Router) Route(found map[string]Instance, id string) (Instance, Reason) {
	inst, ok := found[id]
	if !ok {
		return Instance{ID: id}, ReasonNotFound
	}
	cluster, why := r.Cluster(inst)
	inst.Cluster = cluster
	return inst, why
}

// Cluster returns the configured cluster inst belongs to, or why it
// belongs to none: it lacks the required tag, its tags name only clusters
// we don't serve, or nothing names a cluster and more than one (or no)
// cluster is configured. A single configured cluster is the default for
// instances whose tags name no cluster at all.
func (r Router) Cluster(inst Instance) (string, Reason) {
	if r.tagKey != "" {
		v, ok := inst.Tags[r.tagKey]
		if !ok || (r.tagValue != "" && v != r.tagValue) {
			return "", ReasonMissingTag
		}
	}
	named := TaggedClusters(inst.Tags)
	for _, c := range named {
		if slices.Contains(r.clusters, c) {
			return c, ""
		}
	}
	if len(named) > 0 {
		return "", ReasonForeignCluster
	}
	if len(r.clusters) == 1 {
		return r.clusters[0], ""
	}
	return "", ReasonNoCluster
}

// TaggedClusters returns the cluster names an instance's tags give, most
// authoritative first, without duplicates.
func TaggedClusters(tags map[string]string) []string {
	var out []string
	add := func(name string) {
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	add(tags[tagClusterName])
	add(tags[tagAWSClusterName])
	var prefixed []string
	for k := range tags {
		if name, ok := strings.CutPrefix(k, tagClusterPrefix); ok {
			prefixed = append(prefixed, name)
		}
	}
	sort.Strings(prefixed) // map order is random; keep routing deterministic
	for _, name := range prefixed {
		add(name)
	}
	return out
}
