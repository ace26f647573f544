package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// MaxGroupDraining bounds a numeric DRAINPIPE_GROUP_MAX_DRAINING (the
// slots of one group; internal/group.MaxSlots).
const MaxGroupDraining = 100

// Bounds of DRAINPIPE_GROUP_LEASE_DURATION.
const (
	MinGroupLease = 15 * time.Second
	MaxGroupLease = time.Hour
)

// Groups configures group-aware drains (internal/group).
type Groups struct {
	// MaxDraining is the most nodes of one group that drain at once,
	// MaxDrainingPercent the same as a percentage of the group's nodes;
	// both 0: no limit (the default).
	MaxDraining        int
	MaxDrainingPercent int
	// Label is a node label key naming groups, for nodes in neither an
	// Auto Scaling group nor a Karpenter node pool.
	Label string
	// Namespace holds the slot Leases.
	Namespace string
	// LeaseDuration is how long a slot outlives its holder's last renewal.
	LeaseDuration time.Duration
}

// DefaultGroups limits nothing; the Leases, when on, live in namespace
// drainpipe (deploy/rbac.yaml) and last 2 minutes past their last renewal.
func DefaultGroups() Groups {
	return Groups{Namespace: "drainpipe", LeaseDuration: 2 * time.Minute}
}

// labelKey is a Kubernetes qualified name with an optional DNS prefix.
var labelKey = validator(validation.IsQualifiedName)

// dnsLabel is a namespace name.
var dnsLabel = validator(validation.IsDNS1123Label)

func (r *reader) loadGroups(c *Groups) {
	r.parse("GROUP_MAX_DRAINING", func(v string) error {
		want := fmt.Errorf("want a number of nodes (1–%d) or a percentage of the group (1%%–100%%), got %q", MaxGroupDraining, v)
		if p, ok := strings.CutSuffix(v, "%"); ok {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 100 {
				return want
			}
			c.MaxDrainingPercent = n
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxGroupDraining {
			return want
		}
		c.MaxDraining = n
		return nil
	})
	r.parse("GROUP_LABEL", func(v string) error {
		if len(v) > 316 || !labelKey.MatchString(v) {
			return fmt.Errorf("want a node label key such as example.com/pool, got %q", v)
		}
		c.Label = v
		return nil
	})
	r.parse("GROUP_NAMESPACE", func(v string) error {
		if !dnsLabel.MatchString(v) {
			return fmt.Errorf("want a namespace name (lower-case letters, digits and -), got %q", v)
		}
		c.Namespace = v
		return nil
	})
	r.parse("GROUP_LEASE_DURATION", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < MinGroupLease || d > MaxGroupLease {
			return fmt.Errorf("want a duration from %s to %s, got %q", MinGroupLease, MaxGroupLease, v)
		}
		c.LeaseDuration = d.Round(time.Second)
		return nil
	})
}
