// Package group limits how many nodes of one group drain at once in a
// cluster (DRAINPIPE_GROUP_MAX_DRAINING). A group is the node's Auto Scaling
// group, else its Karpenter node pool, else the value of a label the
// operator names. The coordination lives in the cluster itself: a fixed set
// of slot Leases (coordination.k8s.io/v1) per group in Drainpipe's
// namespace, named <group-hash>-<i> for i below the limit, taken with
// optimistic concurrency (create, or update at the resourceVersion read),
// renewed by the invocation that drains and expiring when it dies, so no
// lock service and no AWS resource is needed.
//
// The holder of a slot is the node, not the invocation: a redelivery of a
// drain cut short by its budget finds the node's own slot and renews it.
package group

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"strconv"

	"github.com/drainpipe/drainpipe/internal/drain"
)

// MaxSlots bounds the slots of one group: each waiting node reads them all
// (one LIST) on every poll, and more than this many nodes of one group
// draining at once is no limit worth coordinating.
const MaxSlots = 100

// Limit is the most nodes of a group that drain at once: a number, or a
// percentage of the group's nodes (internal/config reads and checks
// DRAINPIPE_GROUP_MAX_DRAINING). The zero Limit is off.
type Limit struct {
	N       int // nodes; 0 when Percent is used
	Percent int // 1–100; 0 when N is used
}

// Off reports whether the limit is unset.
func (l Limit) Off() bool { return l.N <= 0 && l.Percent <= 0 }

// String is the limit as configured.
func (l Limit) String() string {
	if l.Percent > 0 {
		return strconv.Itoa(l.Percent) + "%"
	}
	return strconv.Itoa(l.N)
}

// Slots is the number of nodes that may drain at once in a group of size
// nodes: a percentage rounds up and is at least 1 (0 would stop every
// drain), and a group whose size is unknown (0) gets 1; never more than
// MaxSlots.
func (l Limit) Slots(size int) int {
	n := l.N
	if l.Percent > 0 {
		n = int(math.Ceil(float64(size) * float64(l.Percent) / 100))
	}
	return min(max(n, 1), MaxSlots)
}

// Group is a set of nodes whose drains share a limit.
type Group struct {
	// Name says what the group is: asg/NAME, nodepool/NAME or label/KEY=VALUE.
	Name string
	// Selector is a label selector matching the group's nodes, to count
	// them for a percentage; empty when no label names the group.
	Selector string
}

// Hash is the group's name hashed into a Lease name prefix: group names
// (an Auto Scaling group's may hold any character and 255 of them) are not
// always valid object names.
func (g Group) Hash() string {
	sum := sha256.Sum256([]byte(g.Name))
	return hex.EncodeToString(sum[:8])
}

// SlotName is the name of the group's i-th slot Lease.
func (g Group) SlotName(i int) string { return g.Hash() + "-" + strconv.Itoa(i) }

// Of finds a node's group: its Auto Scaling group (asg: the lifecycle
// hook's, else the instance's aws:autoscaling:groupName tag), else its
// Karpenter node pool, else the value of the operator's label key
// (DRAINPIPE_GROUP_LABEL). ok is false for a node in no group: its drain
// is not limited.
func Of(asg string, labels map[string]string, labelKey string) (g Group, ok bool) {
	count := func(key string) string {
		if v, ok := labels[key]; key != "" && ok && v != "" {
			return key + "=" + v
		}
		return ""
	}
	if asg != "" {
		// The operator's label counts the group best; a managed node
		// group is one Auto Scaling group.
		sel := count(labelKey)
		if sel == "" {
			sel = count(drain.NodeGroupLabel)
		}
		return Group{Name: "asg/" + asg, Selector: sel}, true
	}
	if labels[drain.KarpenterNodePoolLabel] != "" {
		return Group{Name: "nodepool/" + labels[drain.KarpenterNodePoolLabel], Selector: count(drain.KarpenterNodePoolLabel)}, true
	}
	if count(labelKey) != "" {
		return Group{Name: "label/" + count(labelKey), Selector: count(labelKey)}, true
	}
	return Group{}, false
}
