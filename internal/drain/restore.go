package drain

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/internal/hold"
)

// restoreRecord is what Drainpipe's first cordon of a node changed, kept in
// AnnotationRestore so that giving the node back undoes exactly that: a
// node someone else had cordoned stays unschedulable, and the exclusion
// label gets its previous value back.
type restoreRecord struct {
	// Unschedulable is true when Drainpipe made the node unschedulable.
	Unschedulable bool `json:"unschedulable"`
	// Label is true when Drainpipe set the load-balancer exclusion label;
	// LabelPrevious is its value before, nil when it was absent.
	Label         bool    `json:"label"`
	LabelPrevious *string `json:"labelPrevious,omitempty"`
}

// recordRestore adds AnnotationRestore to the patch of a node's first
// cordon, the one that knows the node's own state. A node Drainpipe already
// holds (its kind annotation is there) keeps its record, or has none when
// an older version cordoned it: then it is given back without touching
// its unschedulable flag or label.
func recordRestore(node *corev1.Node, cfg Config, p *nodePatch, changed []string) []string {
	if _, ok := node.Annotations[AnnotationRestore]; ok {
		return changed
	}
	if _, ok := node.Annotations[AnnotationKind]; ok {
		return changed
	}
	var r restoreRecord
	r.Unschedulable = !node.Spec.Unschedulable
	if v, ok := node.Labels[ExcludeFromLBLabel]; cfg.ExcludeFromLB && v != "true" {
		r.Label = true
		if ok {
			r.LabelPrevious = &v
		}
	}
	b, err := json.Marshal(r)
	if err != nil { // a struct of bools and a string always encodes
		return changed
	}
	if p.Metadata.Annotations == nil {
		p.Metadata.Annotations = map[string]string{}
		changed = append(changed, "annotations")
	}
	p.Metadata.Annotations[AnnotationRestore] = string(b)
	return changed
}

// Marks is what Drainpipe holds a node out of service with, read from the
// node: for `drainpipe nodes` and to decide whether to give it back.
type Marks struct {
	Node     string `json:"node"`
	Kind     string `json:"kind,omitempty"`
	EventID  string `json:"eventId,omitempty"`
	Deadline string `json:"deadline,omitempty"`
	Since    string `json:"since,omitempty"`
	// ThreatTime is the event time of the newest threat the node was
	// taken for (AnnotationThreatTime).
	ThreatTime string `json:"threatTime,omitempty"`
	// End is when that threat is over at the latest
	// (AnnotationThreatEnd); empty when unknown.
	End       string `json:"threatEnd,omitempty"`
	Cordoned  bool   `json:"cordoned"`     // Drainpipe made it unschedulable
	Tainted   bool   `json:"tainted"`      // Drainpipe's taint is on it
	OutOfSvc  bool   `json:"outOfService"` // Drainpipe's out-of-service taint is on it
	Karpenter bool   `json:"karpenterDisrupting,omitempty"`
	// Holds are the threats the node is held for (AnnotationHolds; a
	// node an earlier release held carries a set of one, read from its
	// single-hold marks above).
	Holds  hold.Set `json:"holds,omitempty"`
	record *restoreRecord
}

// Held reports whether Drainpipe holds anything on the node.
func (m Marks) Held() bool {
	return len(m.Holds) > 0 || m.Kind != "" || m.Tainted || m.OutOfSvc || m.record != nil
}

// ReadMarks reads Drainpipe's marks on a node.
func ReadMarks(node *corev1.Node) Marks {
	a := node.Annotations
	m := Marks{Node: node.Name, Kind: a[AnnotationKind], EventID: a[AnnotationEventID], Deadline: a[AnnotationDeadline],
		Since: a[AnnotationFirstSeen], ThreatTime: a[AnnotationThreatTime],
		End: a[AnnotationThreatEnd]}
	m.Holds = readHolds(a)
	if raw, ok := a[AnnotationRestore]; ok {
		var r restoreRecord
		if json.Unmarshal([]byte(raw), &r) == nil {
			m.record = &r
			m.Cordoned = r.Unschedulable && node.Spec.Unschedulable && !cordonedByOther(node)
		}
	}
	for _, t := range node.Spec.Taints {
		if t.Key == TaintKey {
			m.Tainted = true
		}
		if ownOutOfService(t, a[AnnotationOutOfService]) {
			m.OutOfSvc = true
		}
		if t.Key == KarpenterDisruptedTaint || t.Key == KarpenterDisruptionTaintV0 {
			m.Karpenter = true
		}
	}
	return m
}

// hasDrainpipeAnnotation reports whether any annotation is one Drainpipe
// writes (ownAnnotations): another drainpipe.dev/ key is someone else's,
// and the admission policy refuses Drainpipe a change to it.
func hasDrainpipeAnnotation(node *corev1.Node) bool {
	for _, k := range ownAnnotations {
		if _, ok := node.Annotations[k]; ok {
			return true
		}
	}
	return false
}

// readHolds reads a node's set of holds; a node without the set (held by
// an earlier release) or with one that cannot be read has the set of one
// its single-hold marks describe, and a node without those marks none.
func readHolds(a map[string]string) hold.Set {
	if a[AnnotationKind] == "" {
		// Every write of a set keeps the kind beside it: a set without
		// one was left by a release that knows no set when it gave the
		// node back.
		return nil
	}
	if raw, ok := a[AnnotationHolds]; ok {
		if set, err := hold.Parse(raw); err == nil {
			return set
		}
	}
	return hold.Legacy(a[AnnotationKind], a[AnnotationEventID], a[AnnotationThreatTime], a[AnnotationDeadline],
		a[AnnotationThreatEnd], a[AnnotationFirstSeen])
}

// FieldManager names Drainpipe's writes to nodes in their managedFields,
// so a give-back can tell whether spec.unschedulable is still as its
// cordon set it. It is also what the API server derives from the
// User-Agent (drainpipe/VERSION) of earlier releases' writes, which named
// none.
const FieldManager = "drainpipe"

// patchOptions are the options of every node write that may change what
// a hold took.
func patchOptions() metav1.PatchOptions { return metav1.PatchOptions{FieldManager: FieldManager} }

// cordonedByOther reports a node whose spec.unschedulable was last set by
// someone else than Drainpipe (an operator's `kubectl uncordon` then
// `kubectl cordon` while Drainpipe held it): that cordon is theirs, and a
// give-back leaves it, whatever the restore record says.
func cordonedByOther(node *corev1.Node) bool {
	for _, e := range node.ManagedFields {
		if e.FieldsV1 == nil || e.Manager == FieldManager {
			continue
		}
		var f struct {
			Spec map[string]json.RawMessage `json:"f:spec"`
		}
		if json.Unmarshal(e.FieldsV1.Raw, &f) == nil {
			if _, ok := f.Spec["f:unschedulable"]; ok {
				return true
			}
		}
	}
	return false
}
