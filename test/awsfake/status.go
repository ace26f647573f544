package awsfake

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// ScheduledEvent is an EC2 scheduled event on an instance, as
// DescribeInstanceStatus lists it.
type ScheduledEvent struct {
	InstanceID string
	ID         string // instance-event-...
	Code       string // instance-stop, instance-retirement, instance-reboot, system-reboot, system-maintenance
	// Description is EC2's; "[Completed] ..." or "[Canceled] ..." once over.
	Description string
	NotBefore   time.Time
}

// AddScheduledEvents makes events visible to DescribeInstanceStatus,
// replacing any with the same ID.
func (s *Server) AddScheduledEvents(events ...ScheduledEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range events {
		s.scheduled = append(deleteEvent(s.scheduled, e.ID), e)
	}
}

// RemoveScheduledEvent forgets an event, as EC2 does some time after it is over.
func (s *Server) RemoveScheduledEvent(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scheduled = deleteEvent(s.scheduled, id)
}

func deleteEvent(list []ScheduledEvent, id string) []ScheduledEvent {
	out := list[:0:0]
	for _, e := range list {
		if e.ID != id {
			out = append(out, e)
		}
	}
	return out
}

type ec2Event struct {
	ID          string `xml:"instanceEventId"`
	Code        string `xml:"code"`
	Description string `xml:"description"`
	NotBefore   string `xml:"notBefore,omitempty"`
}

type ec2InstanceStatus struct {
	InstanceID       string `xml:"instanceId"`
	AvailabilityZone string `xml:"availabilityZone"`
	State            struct {
		Code int    `xml:"code"`
		Name string `xml:"name"`
	} `xml:"instanceState"`
	Events []ec2Event `xml:"eventsSet>item"`
}

type describeInstanceStatusResponse struct {
	XMLName   xml.Name            `xml:"http://ec2.amazonaws.com/doc/2016-11-15/ DescribeInstanceStatusResponse"`
	RequestID string              `xml:"requestId"`
	Statuses  []ec2InstanceStatus `xml:"instanceStatusSet>item"`
	NextToken string              `xml:"nextToken,omitempty"`
}

// describeInstanceStatus implements what the sweep uses: the event.code
// filter, MaxResults/NextToken paging, and EC2's default of listing only
// running instances (IncludeAllInstances unset).
func (s *Server) describeInstanceStatus(w http.ResponseWriter, form url.Values, fault Fault) {
	if fault != 0 {
		writeEC2Fault(w, fault)
		return
	}
	var codes []string
	for i := 1; form.Has(fmt.Sprintf("Filter.%d.Name", i)); i++ {
		name := form.Get(fmt.Sprintf("Filter.%d.Name", i))
		if name != "event.code" {
			writeEC2Error(w, http.StatusBadRequest, "InvalidParameterValue", "awsfake: unsupported filter "+name)
			return
		}
		codes = indexed(form, fmt.Sprintf("Filter.%d.Value.", i))
	}
	maxResults := 1000
	if v := form.Get("MaxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 5 || n > 1000 {
			writeEC2Error(w, http.StatusBadRequest, "InvalidParameterValue", "MaxResults must be between 5 and 1000")
			return
		}
		maxResults = n
	}
	all := form.Get("IncludeAllInstances") == "true"

	s.mu.Lock()
	var match []ec2InstanceStatus
	for _, id := range s.order {
		in := s.instances[id]
		state := in.State
		if state == "" {
			state = "running"
		}
		if !all && state != "running" {
			continue
		}
		st := ec2InstanceStatus{InstanceID: id, AvailabilityZone: toEC2(in).Placement.AvailabilityZone}
		st.State.Name, st.State.Code = state, stateCodes[state]
		for _, e := range s.scheduled {
			if e.InstanceID == id && (codes == nil || contains(codes, e.Code)) {
				ev := ec2Event{ID: e.ID, Code: e.Code, Description: e.Description}
				if !e.NotBefore.IsZero() {
					ev.NotBefore = e.NotBefore.UTC().Format("2006-01-02T15:04:05.000Z")
				}
				st.Events = append(st.Events, ev)
			}
		}
		if codes != nil && len(st.Events) == 0 {
			continue
		}
		match = append(match, st)
	}
	s.mu.Unlock()

	start, ok := pageStart(w, form, len(match))
	if !ok {
		return
	}
	resp := describeInstanceStatusResponse{RequestID: requestID}
	end := min(len(match), start+maxResults)
	if end < len(match) {
		resp.NextToken = strconv.Itoa(end)
	}
	resp.Statuses = match[start:end]
	writeXML(w, http.StatusOK, resp)
}
