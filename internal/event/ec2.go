package event

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// SpotNotice is how long before the interruption AWS sends the warning.
const SpotNotice = 2 * time.Minute

// ShutdownNotice is the deadline of a stopping or shutting-down instance,
// counted from the state change: its OS is already shutting down, and AWS
// gives no figure beyond "a graceful OS shutdown" (none at all with
// skipOsShutdown). Drainpipe takes the shortest notice AWS gives for any
// instance it takes away, the Spot warning's two minutes, which also
// outlasts systemd's default 90 s stop timeout that bounds a clean
// shutdown. stopped and terminated have no deadline: the instance is
// already gone (the pipeline's StoppedWait applies).
const ShutdownNotice = SpotNotice

// shuttingDown are the states of an instance whose OS is going down.
var shuttingDown = map[string]bool{"stopping": true, "shutting-down": true}

// ec2Detail is the detail of the EC2 events: spot interruption warning,
// rebalance recommendation and state-change notification.
type ec2Detail struct {
	InstanceID     string `json:"instance-id"`
	InstanceAction string `json:"instance-action"` // spot only
	State          string `json:"state"`           // state-change only
}

// actedStates are the EC2 states that mean the instance is going away.
var actedStates = map[string]bool{"stopping": true, "stopped": true, "shutting-down": true, "terminated": true}

// restoreStates are the EC2 states that mean an instance runs again: a node
// cordoned for its stop can come back.
var restoreStates = map[string]bool{"pending": true, "running": true}

// StateChangeStates lists the states a state-change notice is read for:
// actedStates, then restoreStates (the stack's rule matches these only).
func StateChangeStates() []string {
	return []string{"stopping", "stopped", "shutting-down", "terminated", "pending", "running"}
}

func parseSpot(h header, raw json.RawMessage) (Parsed, error) {
	var d ec2Detail
	if err := decodeDetail(raw, &d); err != nil {
		return Parsed{}, err
	}
	if err := checkInstanceID(d.InstanceID); err != nil {
		return Parsed{}, err
	}
	in := h.interruption(KindSpotInterruption, d.InstanceID)
	in.InstanceAction = clip(d.InstanceAction)
	in.Deadline = h.time.Add(SpotNotice)
	// AWS: hibernation begins at once; there is no two-minute warning.
	if d.InstanceAction == "hibernate" {
		in.Deadline = h.time
	}
	in.Summary = "spot interruption warning"
	if d.InstanceAction != "" {
		in.Summary += ", instance-action " + clip(d.InstanceAction)
	}
	return act(in)
}

func parseRebalance(h header, raw json.RawMessage) (Parsed, error) {
	var d ec2Detail
	if err := decodeDetail(raw, &d); err != nil {
		return Parsed{}, err
	}
	if err := checkInstanceID(d.InstanceID); err != nil {
		return Parsed{}, err
	}
	in := h.interruption(KindRebalanceRecommendation, d.InstanceID)
	in.Summary = "rebalance recommendation"
	return act(in)
}

func parseStateChange(h header, raw json.RawMessage) (Parsed, error) {
	var d ec2Detail
	if err := decodeDetail(raw, &d); err != nil {
		return Parsed{}, err
	}
	if err := checkInstanceID(d.InstanceID); err != nil {
		return Parsed{}, err
	}
	if d.State == "" {
		return Parsed{}, rejectf("missing state")
	}
	if restoreStates[d.State] {
		in := h.interruption(KindStateChange, d.InstanceID)
		in.State = d.State
		in.Restore = true
		in.Summary = "instance state " + d.State + ": a node cordoned for its stop comes back"
		return act(in)
	}
	if !actedStates[d.State] {
		return ignore("instance %s entered state %q, which is not one that takes it away", d.InstanceID, clip(d.State))
	}
	in := h.interruption(KindStateChange, d.InstanceID)
	in.State = d.State
	in.Summary = "instance state " + d.State
	if shuttingDown[d.State] {
		in.Deadline = h.time.Add(ShutdownNotice)
	}
	return act(in)
}

func sampleSpot(s SampleSpec, e *SampleEvent) error {
	e.Detail = map[string]string{"instance-id": s.Instance, "instance-action": "terminate"}
	return sampleNotice(s, e, "spot")
}

// sampleInstance is a detail naming the instance only.
func sampleInstance(s SampleSpec, e *SampleEvent) error {
	e.Detail = map[string]string{"instance-id": s.Instance}
	return nil
}

func sampleStateChange(s SampleSpec, e *SampleEvent) error {
	if !slices.Contains(StateChangeStates(), s.State) {
		return fmt.Errorf("--state %q: want one of %s", s.State, strings.Join(StateChangeStates(), ", "))
	}
	label := "state-change to " + s.State
	if s.InSet && !shuttingDown[s.State] {
		return fmt.Errorf("--in: a %s event has no deadline", label)
	}
	e.Detail = map[string]string{"instance-id": s.Instance, "state": s.State}
	return sampleNotice(s, e, label)
}
