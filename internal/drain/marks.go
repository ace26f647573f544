package drain

import "slices"

// Every key Drainpipe writes or reads on nodes and pods: its own marks,
// and the ones Kubernetes, Karpenter and EKS put that it acts on. A give-back
// (Restore, Uncordon) removes Drainpipe's node marks but AnnotationActed;
// docs/return-to-service.md lists them (docs/marks_test.go holds it to MarkKeys).

// Drainpipe's marks on the nodes it holds.
const (
	// TaintKey is the taint of a node Drainpipe took out of service (its
	// effect is DRAINPIPE_TAINT_EFFECT); a give-back removes it.
	TaintKey = "drainpipe.dev/interruption"
	// LabelHeld, "true", is on every node Drainpipe holds (cordoned,
	// tainted or tainted out of service): the sweep lists held nodes with
	// HeldSelector alone, so a cluster where Drainpipe holds nothing costs
	// one narrow LIST. A label, as only labels can be selected on. A
	// give-back removes it.
	LabelHeld    = "drainpipe.dev/held"
	labelHeldOn  = "true"
	HeldSelector = LabelHeld + "=" + labelHeldOn
	// AnnotationRestore records, once, what the first cordon changed (see
	// restoreRecord), so a give-back undoes exactly that; it removes it.
	AnnotationRestore = "drainpipe.dev/restore"
	// AnnotationOutOfService marks an out-of-service taint Drainpipe put,
	// the only one a give-back removes; it removes the mark with it. Its
	// value is the taint's timeAdded, so it names that taint and no later
	// one ("true" from earlier releases).
	AnnotationOutOfService = "drainpipe.dev/out-of-service"
	// AnnotationHolds is the node's set of holds (internal/hold): one per
	// threat that stands, each ended by its own give-back; the node's
	// cordon, taint and labels are undone only when the set is empty.
	AnnotationHolds = "drainpipe.dev/holds"
	// AnnotationKind, AnnotationEventID and AnnotationDeadline name the
	// newest hold's interruption (its kind, event id and deadline, RFC
	// 3339), as releases before the set read them; a give-back that leaves
	// holds rewrites them to the newest left, and a whole one removes them.
	AnnotationKind     = "drainpipe.dev/kind"
	AnnotationEventID  = "drainpipe.dev/event-id"
	AnnotationDeadline = "drainpipe.dev/deadline"
	// AnnotationFirstSeen is when Drainpipe first cordoned the node (RFC
	// 3339); a give-back removes it.
	AnnotationFirstSeen = "drainpipe.dev/first-seen"
	// AnnotationThreatTime is the event time (RFC 3339, as precise as AWS
	// gave it) of the newest threat the node was taken for: a restore
	// dated no later than it is overtaken and gives nothing back (SQS and
	// EventBridge do not keep order). A give-back removes it.
	AnnotationThreatTime = "drainpipe.dev/threat-time"
	// AnnotationThreatEnd is when the threat the node is held for is over
	// at the latest (RFC 3339): a Capacity Block's end, an AWS Health
	// window's end. The sweep gives the node back no earlier; a give-back
	// removes it.
	AnnotationThreatEnd = "drainpipe.dev/threat-end"
	// AnnotationReport keeps a bounded Summary of the node's drain,
	// rewritten at the end of every Run, so `drainpipe nodes NODE` (or
	// kubectl) answers "why isn't this node draining?" while it is. A
	// give-back removes it.
	AnnotationReport = "drainpipe.dev/drain-report"
	// AnnotationActed lists the EC2 scheduled events already acted on for
	// the node's instance, each as ScheduledKey gives it, whether an AWS
	// Health notice or the sweep found it first: the other source then
	// leaves it. It lies outside the drainpipe.dev/ prefix on purpose: a
	// give-back keeps it, as a late notice for an event already over must
	// still find it recorded; it goes with the node.
	AnnotationActed = "acted.drainpipe.dev/scheduled-events"
)

// Annotations the workloads read and write.
const (
	// AnnotationInterruption tells the node and each pod to be evicted
	// what is coming (an Interruption in JSON) before the first eviction;
	// a pod reads it live through a downward-API volume. A give-back
	// removes it from the node; it goes with the evicted pods.
	AnnotationInterruption = "drainpipe.dev/interruption"
	// AnnotationNotice, "true" on a pod, is the workload's: it asks for
	// Config.NoticePeriod between the warning and the pod's eviction (to
	// checkpoint). Drainpipe only reads it.
	AnnotationNotice = "drainpipe.dev/notice"
)

// Other owners' marks Drainpipe writes or reads.
const (
	// ExcludeFromLBLabel takes a node out of external load balancers
	// before its drain (DRAINPIPE_EXCLUDE_FROM_LB); a give-back puts back
	// its previous value, or removes it.
	ExcludeFromLBLabel = "node.kubernetes.io/exclude-from-external-load-balancers"
	// OutOfServiceTaintKey is Kubernetes' non-graceful node shutdown
	// taint, put on a node whose instance EC2 reports stopped
	// (DRAINPIPE_OUT_OF_SERVICE); removed when the instance runs again.
	OutOfServiceTaintKey   = "node.kubernetes.io/out-of-service"
	outOfServiceTaintValue = "nodeshutdown"
	// KarpenterDisruptedTaint is on nodes Karpenter is disrupting: never
	// give such a node back. Karpenter's to remove.
	KarpenterDisruptedTaint = "karpenter.sh/disrupted"
	// KarpenterDisruptionTaintV0 is the same mark before Karpenter v1.
	KarpenterDisruptionTaintV0 = "karpenter.sh/disruption"
	// AnnotationDoNotDisrupt is Karpenter's, on a pod: "true" protects it
	// for ever, a Go duration ("4h") for that long after it started. A Run
	// evicts such pods last: under a deadline it deletes them at the
	// latest moment their grace still fits before it, never leaving them
	// to die with the instance; without one it leaves them until their
	// protection ends (the caller's rules decide when to stop waiting, a
	// lifecycle hook's limit).
	AnnotationDoNotDisrupt = "karpenter.sh/do-not-disrupt"
	// KarpenterNodePoolLabel names the Karpenter node pool (v0.32 and later) of a node:
	// its group, and with DRAINPIPE_KARPENTER_NODES=skip a node left to
	// Karpenter.
	KarpenterNodePoolLabel = "karpenter.sh/nodepool"
	// KarpenterProvisionerLabel marks nodes Karpenter before v1
	// provisioned.
	KarpenterProvisionerLabel = "karpenter.sh/provisioner-name"
	// NodeGroupLabel names an EKS managed node group: it counts an Auto
	// Scaling group's nodes when DRAINPIPE_GROUP_LABEL is unset.
	NodeGroupLabel = "eks.amazonaws.com/nodegroup"
	// AutoModeLabel, AutoModeCompute on an EKS Auto Mode node, which EKS
	// handles (DRAINPIPE_AUTO_MODE_NODES).
	AutoModeLabel   = "eks.amazonaws.com/compute-type"
	AutoModeCompute = "auto"
)

// ownAnnotations are the node annotations Drainpipe writes under
// drainpipe.dev/: a node carrying any was touched, and a give-back removes
// these and no other (deploy/admission-policy.yaml lists the same keys).
var ownAnnotations = []string{AnnotationRestore, AnnotationReport, AnnotationOutOfService, AnnotationKind,
	AnnotationEventID, AnnotationDeadline, AnnotationFirstSeen, AnnotationThreatTime, AnnotationThreatEnd, AnnotationInterruption,
	AnnotationHolds}

// OwnAnnotations returns a copy of ownAnnotations, for the checks that hold
// other lists of Drainpipe's marks (the admission policy's) to it.
func OwnAnnotations() []string { return slices.Clone(ownAnnotations) }

// MarkKey is one key of the above, where it goes, and who writes it.
type MarkKey struct {
	Key string
	// On is "node label", "node annotation", "node taint" or "pod
	// annotation".
	On string
	// Writer is Drainpipe, Kubernetes, Karpenter, EKS or the workload.
	Writer string
}

// MarkKeys lists every key Drainpipe writes or reads on nodes and pods.
func MarkKeys() []MarkKey {
	const dp, nl, na, nt, pa = "Drainpipe", "node label", "node annotation", "node taint", "pod annotation"
	return []MarkKey{
		{TaintKey, nt, dp}, {LabelHeld, nl, dp}, {ExcludeFromLBLabel, nl, dp}, {OutOfServiceTaintKey, nt, dp},
		{AnnotationRestore, na, dp}, {AnnotationOutOfService, na, dp}, {AnnotationHolds, na, dp}, {AnnotationKind, na, dp},
		{AnnotationEventID, na, dp}, {AnnotationDeadline, na, dp}, {AnnotationFirstSeen, na, dp},
		{AnnotationThreatTime, na, dp}, {AnnotationThreatEnd, na, dp}, {AnnotationReport, na, dp},
		{AnnotationInterruption, na, dp}, {AnnotationActed, na, dp},
		{AnnotationInterruption, pa, dp}, {AnnotationNotice, pa, "the workload"},
		{AnnotationDoNotDisrupt, pa, "Karpenter"}, {KarpenterDisruptedTaint, nt, "Karpenter"},
		{KarpenterDisruptionTaintV0, nt, "Karpenter"}, {KarpenterNodePoolLabel, nl, "Karpenter"},
		{KarpenterProvisionerLabel, nl, "Karpenter"}, {NodeGroupLabel, nl, "EKS"}, {AutoModeLabel, nl, "EKS"},
	}
}
