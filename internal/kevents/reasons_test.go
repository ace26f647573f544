package kevents

// The reasons of the kinds' node events, as operators' alerts and
// `kubectl get events --field-selector reason=...` name them: the kinds
// table must keep giving these.
const (
	ReasonSpotInterruption                = "SpotInterruption"
	ReasonRebalanceRecommendation         = "RebalanceRecommendation"
	ReasonScheduledMaintenance            = "ScheduledMaintenance"
	ReasonLifecycleTermination            = "LifecycleTermination"
	ReasonInstanceStateChange             = "InstanceStateChange"
	ReasonCapacityReservationInterruption = "CapacityReservationInterruption"
	ReasonCapacityBlockExpiry             = "CapacityBlockExpiry"
)
