package awsfake

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"slices"
	"strconv"
)

// Subscription is a subscription of an SNS topic. A Pending one is
// listed as SNS lists an unconfirmed subscription (SubscriptionArn
// PendingConfirmation).
type Subscription struct {
	Protocol string // email, sqs, https, ...
	Endpoint string
	Pending  bool
}

// AddTopic makes a topic exist, with its subscriptions, for
// ListSubscriptionsByTopic.
func (s *Server) AddTopic(arn string, subs ...Subscription) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.more.subs == nil {
		s.more.subs = map[string][]Subscription{}
	}
	s.more.subs[arn] = slices.Clone(subs)
}

const snsNS = "http://sns.amazonaws.com/doc/2010-03-31/"

// snsPage is how many subscriptions SNS lists per page.
const snsPage = 100

func (s *Server) listSubscriptionsByTopic(w http.ResponseWriter, form url.Values, fault Fault) {
	if fault != 0 {
		queryFault(w, ServiceSNS, "ListSubscriptionsByTopic", fault)
		return
	}
	topic := form.Get("TopicArn")
	s.mu.Lock()
	subs, ok := s.more.subs[topic]
	s.mu.Unlock()
	if !ok {
		writeQueryError(w, http.StatusNotFound, "NotFound", "Topic does not exist")
		return
	}
	start, _ := strconv.Atoi(form.Get("NextToken"))
	if start < 0 || start > len(subs) {
		writeQueryError(w, http.StatusBadRequest, "InvalidParameter", "Invalid parameter: NextToken")
		return
	}
	type member struct {
		TopicArn        string `xml:"TopicArn"`
		Protocol        string `xml:"Protocol"`
		SubscriptionArn string `xml:"SubscriptionArn"`
		Owner           string `xml:"Owner"`
		Endpoint        string `xml:"Endpoint"`
	}
	resp := struct {
		XMLName   xml.Name
		Subs      []member `xml:"ListSubscriptionsByTopicResult>Subscriptions>member"`
		NextToken string   `xml:"ListSubscriptionsByTopicResult>NextToken,omitempty"`
		RequestID string   `xml:"ResponseMetadata>RequestId"`
	}{XMLName: xml.Name{Space: snsNS, Local: "ListSubscriptionsByTopicResponse"}, RequestID: requestID}
	end := min(start+snsPage, len(subs))
	for i, sub := range subs[start:end] {
		arn := topic + ":00000000-0000-4000-8000-" + strconv.FormatInt(int64(100000000000+start+i), 10)
		if sub.Pending {
			arn = "PendingConfirmation"
		}
		resp.Subs = append(resp.Subs, member{TopicArn: topic, Protocol: sub.Protocol, SubscriptionArn: arn, Owner: "111122223333", Endpoint: sub.Endpoint})
	}
	if end < len(subs) {
		resp.NextToken = strconv.Itoa(end)
	}
	writeXML(w, http.StatusOK, resp)
}
