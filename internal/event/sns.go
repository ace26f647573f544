package event

import "encoding/json"

// snsEnvelope is an SNS notification as SNS delivers it to an SQS queue
// without raw message delivery.
type snsEnvelope struct {
	Type             string `json:"Type"`
	TopicArn         string `json:"TopicArn"`
	Message          string `json:"Message"`
	SignatureVersion string `json:"SignatureVersion"`
	Signature        string `json:"Signature"`
	SigningCertURL   string `json:"SigningCertURL"`
}

func parseSNS(body []byte) (Parsed, error) {
	var n snsEnvelope
	if err := json.Unmarshal(body, &n); err != nil {
		return Parsed{}, rejectf("decoding SNS notification: %w", err)
	}
	switch n.Type {
	case "Notification":
	case "SubscriptionConfirmation", "UnsubscribeConfirmation":
		return ignore("SNS %s message", n.Type)
	default:
		return Parsed{}, rejectf("SNS message of type %q, not Notification", clip(n.Type))
	}
	if n.Message == "" {
		return Parsed{}, rejectf("SNS notification without a Message")
	}
	if err := checkSNSEnvelope(n); err != nil {
		return Parsed{}, err
	}
	// The payload is a JSON document inside a JSON string; one level of
	// wrapping is all SNS produces.
	parsed, err := parse([]byte(n.Message), false)
	parsed.Topic = n.TopicArn
	return parsed, err
}
