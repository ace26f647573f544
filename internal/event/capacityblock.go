package event

import (
	"encoding/json"
	"fmt"
	"regexp"
	"time"
)

// KindCapacityBlockExpiry is a Capacity Block about to end: EC2 terminates
// every instance still running in it.
const KindCapacityBlockExpiry Kind = "capacity-block-expiry"

// Both spellings appear in AWS's documentation of the same event.
const (
	detailBlockExpiry    = "Capacity Block Expiration Warning"
	detailBlockExpiryAlt = "Capacity Block Reservation Expiration Warning"
)

// BlockTerminationLead is how long before a Capacity Block's end EC2 begins
// terminating its instances: the warning comes 40 minutes before the end
// and says they begin to terminate 10 minutes later.
const BlockTerminationLead = 30 * time.Minute

// blockNotice is the lead of the warning over the terminations when the
// end date is missing.
const blockNotice = 10 * time.Minute

var reservationIDPattern = regexp.MustCompile(`^cr-[0-9a-f]{8}([0-9a-f]{9})?$`)

type blockDetail struct {
	ReservationID string `json:"capacity-reservation-id"`
	EndDate       string `json:"end-date"`
}

// parseBlockExpiry reads a Capacity Block Expiration Warning. It names the
// reservation only; its instances are found later (DescribeInstances by
// capacity-reservation-id), so the interruption carries no instance.
func parseBlockExpiry(h header, raw json.RawMessage) (Parsed, error) {
	var d blockDetail
	if err := decodeDetail(raw, &d); err != nil {
		return Parsed{}, err
	}
	if err := checkPattern("capacity reservation id", d.ReservationID, reservationIDPattern); err != nil {
		return Parsed{}, err
	}
	in := h.interruption(KindCapacityBlockExpiry)
	in.Instances = nil
	in.Reservation = d.ReservationID
	in.Deadline = h.time.Add(blockNotice)
	in.Summary = "capacity block " + d.ReservationID + " expires"
	if d.EndDate != "" {
		// An end date in a form not known here must not cost the whole
		// notice: the documented lead (terminations begin ten minutes
		// after the warning) stands in for it.
		end, err := parseTime("capacity block end date", d.EndDate)
		if err != nil {
			in.Summary += fmt.Sprintf(" (end date %q unreadable: terminations taken to begin %s after the warning)",
				clip(d.EndDate), blockNotice)
			return act(in)
		}
		in.Deadline = end.Add(-BlockTerminationLead)
		in.End = end
		in.Summary += " " + end.Format(time.RFC3339)
	}
	return act(in)
}

func sampleBlockExpiry(s SampleSpec, e *SampleEvent) error {
	e.Resources = []string{fmt.Sprintf("arn:aws:ec2:%s:%s:capacity-reservation/%s", s.Region, s.Account, s.Reservation)}
	e.Detail = map[string]string{"capacity-reservation-id": s.Reservation,
		"end-date": s.Now.Add(s.In + BlockTerminationLead).UTC().Format(time.RFC3339)}
	return nil
}
