package event

import (
	"encoding/json"
	"time"
)

// The EventBridge detail-types Drainpipe knows; each kind's row in the
// table gives the only source allowed to send it.
const (
	detailSpot        = "EC2 Spot Instance Interruption Warning"
	detailRebalance   = "EC2 Instance Rebalance Recommendation"
	detailStateChange = "EC2 Instance State-change Notification"
	detailHealth      = "AWS Health Event"
	detailTerminate   = "EC2 Instance-terminate Lifecycle Action"
	detailLaunch      = "EC2 Instance-launch Lifecycle Action"
	detailCapacity    = "EC2 Capacity Reservation Instance Interruption Warning"
)

// envelope is the EventBridge event structure common to every detail-type.
type envelope struct {
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Detail     json.RawMessage `json:"detail"`
	// Resources is kept raw: only AWS Health and the Scheduled Event read it, and a body whose
	// resources are not a list must not fail the other kinds.
	Resources json.RawMessage `json:"resources"`
}

// header is what every interruption takes from its envelope.
type header struct {
	id, account, region string
	time                time.Time
	resources           json.RawMessage
}

func (h header) interruption(k Kind, instances ...string) Interruption {
	return Interruption{Kind: k, Instances: instances, EventID: h.id, Time: h.time, Account: h.account, Region: h.region}
}

func parseEventBridge(body []byte) (Parsed, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return Parsed{}, rejectf("decoding EventBridge event: %w", err)
	}
	if env.DetailType == "" {
		return Parsed{}, rejectf("missing detail-type")
	}
	row, known := byDetailType(env.DetailType)
	if !known {
		return ignore("detail-type %q (source %q) is not one Drainpipe handles", clip(env.DetailType), clip(env.Source))
	}
	if env.Source != row.Source {
		return Parsed{}, rejectf("detail-type %q must come from source %q, not %q", env.DetailType, row.Source, clip(env.Source))
	}
	h, err := checkEnvelope(env)
	if err != nil {
		return Parsed{}, err
	}
	return row.parse(h, env.Detail)
}

func checkEnvelope(env envelope) (header, error) {
	if err := checkPattern("event id", env.ID, eventIDPattern); err != nil {
		return header{}, err
	}
	if err := checkAccount(env.Account); err != nil {
		return header{}, err
	}
	if err := checkRegion(env.Region); err != nil {
		return header{}, err
	}
	t, err := parseTime("event time", env.Time)
	if err != nil {
		return header{}, err
	}
	if len(env.Detail) == 0 || env.Detail[0] != '{' {
		return header{}, rejectf("missing or non-object detail")
	}
	return header{id: env.ID, account: env.Account, region: env.Region, time: t, resources: env.Resources}, nil
}

// decodeDetail unmarshals an event's detail into v.
func decodeDetail(detail json.RawMessage, v any) error {
	if err := json.Unmarshal(detail, v); err != nil {
		return rejectf("decoding detail: %w", err)
	}
	return nil
}
