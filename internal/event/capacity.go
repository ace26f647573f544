package event

import (
	"encoding/json"
	"time"
)

// capacityDetail is the detail of an EC2 Capacity Reservation Instance
// Interruption Warning (interruptible Capacity Reservations).
type capacityDetail struct {
	InstanceID      string `json:"instance-id"`
	InstanceAction  string `json:"instance-action"`
	TerminationTime string `json:"instance-termination-time"`
}

// parseCapacityInterruption reads the warning an interruptible Capacity
// Reservation sends two minutes before it terminates an instance whose
// capacity its owner reclaims. The deadline is the documented
// instance-termination-time, or two minutes after the event without it.
func parseCapacityInterruption(h header, raw json.RawMessage) (Parsed, error) {
	var d capacityDetail
	if err := decodeDetail(raw, &d); err != nil {
		return Parsed{}, err
	}
	if err := checkInstanceID(d.InstanceID); err != nil {
		return Parsed{}, err
	}
	in := h.interruption(KindCapacityReservationInterruption, d.InstanceID)
	in.InstanceAction = clip(d.InstanceAction)
	in.Deadline = h.time.Add(SpotNotice)
	if d.TerminationTime != "" {
		t, err := parseTime("instance termination time", d.TerminationTime)
		if err != nil {
			return Parsed{}, err
		}
		in.Deadline = t
	}
	in.Summary = "capacity reservation interruption warning"
	if d.InstanceAction != "" {
		in.Summary += ", instance-action " + clip(d.InstanceAction)
	}
	return act(in)
}

func sampleCapacity(s SampleSpec, e *SampleEvent) error {
	e.Detail = map[string]string{"instance-id": s.Instance, "instance-action": "terminate",
		"instance-termination-time": s.Now.Add(s.In).UTC().Format(time.RFC3339)}
	return nil
}
