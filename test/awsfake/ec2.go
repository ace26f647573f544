package awsfake

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Instance is an EC2 instance the fake knows.
type Instance struct {
	ID               string
	State            string // running when empty
	PrivateDNSName   string
	AvailabilityZone string // us-west-2a when empty
	Tags             map[string]string
	LaunchTime       time.Time
	Lifecycle        string // EC2's instanceLifecycle: spot, capacity-block; empty for On-Demand
	// CapacityReservationID is the Capacity Reservation (or Block) the
	// instance runs in; empty for none.
	CapacityReservationID string
}

// AddInstances makes instances visible to DescribeInstances, replacing any
// with the same ID.
func (s *Server) AddInstances(instances ...Instance) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, in := range instances {
		if _, ok := s.instances[in.ID]; !ok {
			s.order = append(s.order, in.ID)
		}
		s.instances[in.ID] = in
	}
}

// SetInstanceState changes a known instance's state (running, stopped,
// terminated, ...), as EC2 would after a stop, start or termination; it
// reports whether the instance is known.
func (s *Server) SetInstanceState(id, state string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[id]
	if ok {
		in.State = state
		s.instances[id] = in
	}
	return ok
}

type ec2Tag struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

type ec2Instance struct {
	InstanceID string `xml:"instanceId"`
	State      struct {
		Code int    `xml:"code"`
		Name string `xml:"name"`
	} `xml:"instanceState"`
	PrivateDNSName string `xml:"privateDnsName"`
	Placement      struct {
		AvailabilityZone string `xml:"availabilityZone"`
	} `xml:"placement"`
	LaunchTime string   `xml:"launchTime,omitempty"`
	Tags       []ec2Tag `xml:"tagSet>item"`
	Lifecycle  string   `xml:"instanceLifecycle,omitempty"`
	// CapacityReservationID is capacityReservationId, as EC2 answers.
	CapacityReservationID string `xml:"capacityReservationId,omitempty"`
}

type ec2Reservation struct {
	ReservationID string        `xml:"reservationId"`
	OwnerID       string        `xml:"ownerId"`
	Instances     []ec2Instance `xml:"instancesSet>item"`
}

type describeInstancesResponse struct {
	XMLName      xml.Name         `xml:"http://ec2.amazonaws.com/doc/2016-11-15/ DescribeInstancesResponse"`
	RequestID    string           `xml:"requestId"`
	Reservations []ec2Reservation `xml:"reservationSet>item"`
	NextToken    string           `xml:"nextToken,omitempty"`
}

var stateCodes = map[string]int{"pending": 0, "running": 16, "shutting-down": 32, "terminated": 48, "stopping": 64, "stopped": 80}

// describeInstances implements the parts Drainpipe uses: InstanceId.N
// (which fails on unknown IDs, as EC2 does), the instance-id,
// capacity-reservation-id and tag:KEY filters, and MaxResults/NextToken paging (filters only, as in EC2).
func (s *Server) describeInstances(w http.ResponseWriter, form url.Values, fault Fault) {
	if fault != 0 {
		writeEC2Fault(w, fault)
		return
	}
	ids := indexed(form, "InstanceId.")
	filters := map[string][]string{}
	for i := 1; form.Has(fmt.Sprintf("Filter.%d.Name", i)); i++ {
		name := form.Get(fmt.Sprintf("Filter.%d.Name", i))
		if name != "instance-id" && name != "capacity-reservation-id" && name != "instance-state-name" && name != "tag-key" &&
			!strings.HasPrefix(name, "tag:") {
			writeEC2Error(w, http.StatusBadRequest, "InvalidParameterValue", "awsfake: unsupported filter "+name)
			return
		}
		filters[name] = indexed(form, fmt.Sprintf("Filter.%d.Value.", i))
	}
	maxResults := 0
	if v := form.Get("MaxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 5 || n > 1000 {
			writeEC2Error(w, http.StatusBadRequest, "InvalidParameterValue", "MaxResults must be between 5 and 1000")
			return
		}
		if len(ids) > 0 {
			writeEC2Error(w, http.StatusBadRequest, "InvalidParameterCombination", "The parameter instancesSet cannot be used with the parameter maxResults")
			return
		}
		maxResults = n
	}

	s.mu.Lock()
	var missing []string
	for _, id := range ids {
		if _, ok := s.instances[id]; !ok {
			missing = append(missing, id)
		}
	}
	var match []Instance
	for _, id := range s.order {
		in := s.instances[id]
		if (len(ids) == 0 || contains(ids, id)) && matches(in, filters) {
			match = append(match, in)
		}
	}
	s.mu.Unlock()
	if len(missing) > 0 {
		sort.Strings(missing)
		writeEC2Error(w, http.StatusBadRequest, "InvalidInstanceID.NotFound",
			fmt.Sprintf("The instance IDs '%s' do not exist", strings.Join(missing, ", ")))
		return
	}

	start, ok := pageStart(w, form, len(match))
	if !ok {
		return
	}
	resp := describeInstancesResponse{RequestID: requestID}
	end := len(match)
	if maxResults > 0 && start+maxResults < end {
		end = start + maxResults
		resp.NextToken = strconv.Itoa(end)
	}
	// One reservation per instance, as for instances launched one by one.
	for i, in := range match[start:end] {
		resp.Reservations = append(resp.Reservations, ec2Reservation{
			ReservationID: fmt.Sprintf("r-%017x", start+i),
			OwnerID:       "111122223333",
			Instances:     []ec2Instance{toEC2(in)},
		})
	}
	writeXML(w, http.StatusOK, resp)
}

func toEC2(in Instance) ec2Instance {
	var out ec2Instance
	out.InstanceID = in.ID
	out.State.Name = in.State
	if out.State.Name == "" {
		out.State.Name = "running"
	}
	out.State.Code = stateCodes[out.State.Name]
	out.PrivateDNSName = in.PrivateDNSName
	out.Lifecycle = in.Lifecycle
	out.CapacityReservationID = in.CapacityReservationID
	out.Placement.AvailabilityZone = in.AvailabilityZone
	if out.Placement.AvailabilityZone == "" {
		out.Placement.AvailabilityZone = Region + "a"
	}
	if !in.LaunchTime.IsZero() {
		out.LaunchTime = in.LaunchTime.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	keys := make([]string, 0, len(in.Tags))
	for k := range in.Tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out.Tags = append(out.Tags, ec2Tag{Key: k, Value: in.Tags[k]})
	}
	return out
}

func matches(in Instance, filters map[string][]string) bool {
	for name, values := range filters {
		var got string
		var ok bool
		switch {
		case name == "instance-id":
			got, ok = in.ID, true
		case name == "capacity-reservation-id":
			got, ok = in.CapacityReservationID, in.CapacityReservationID != ""
		case name == "instance-state-name":
			got, ok = toEC2(in).State.Name, true
		case name == "tag-key":
			ok = slices.ContainsFunc(values, func(k string) bool { _, has := in.Tags[k]; return has })
			if ok {
				continue
			}
		default:
			got, ok = in.Tags[strings.TrimPrefix(name, "tag:")]
		}
		if !ok || !contains(values, got) {
			return false
		}
	}
	return true
}

// indexed returns form values prefix1, prefix2, ... until one is missing.
func indexed(form url.Values, prefix string) []string {
	var out []string
	for i := 1; form.Has(prefix + strconv.Itoa(i)); i++ {
		out = append(out, form.Get(prefix+strconv.Itoa(i)))
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func writeEC2Fault(w http.ResponseWriter, f Fault) {
	switch f {
	case Throttle:
		writeEC2Error(w, http.StatusServiceUnavailable, "RequestLimitExceeded", "Request limit exceeded.")
	case AccessDenied:
		writeEC2Error(w, http.StatusForbidden, "UnauthorizedOperation", "You are not authorized to perform this operation.")
	case NotFound:
		writeEC2Error(w, http.StatusBadRequest, "InvalidInstanceID.NotFound", "The instance ID does not exist")
	default:
		writeEC2Error(w, http.StatusInternalServerError, "InternalError", "An internal error has occurred")
	}
}

type ec2ErrorResponse struct {
	XMLName xml.Name `xml:"Response"`
	Errors  []struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	} `xml:"Errors>Error"`
	RequestID string `xml:"RequestID"`
}

func writeEC2Error(w http.ResponseWriter, status int, code, msg string) {
	resp := ec2ErrorResponse{RequestID: requestID}
	resp.Errors = append(resp.Errors, struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}{code, msg})
	writeXML(w, status, resp)
}

func writeXML(w http.ResponseWriter, status int, v any) {
	out, err := xml.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	out = append([]byte(xml.Header), out...)
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// pageStart reads a request's NextToken (the index its page starts at),
// answering an error and returning false when it is not one of ours.
func pageStart(w http.ResponseWriter, form url.Values, total int) (int, bool) {
	tok := form.Get("NextToken")
	if tok == "" {
		return 0, true
	}
	n, err := strconv.Atoi(tok)
	if err != nil || n < 0 || n > total {
		writeEC2Error(w, http.StatusBadRequest, "InvalidParameterValue", "invalid NextToken")
		return 0, false
	}
	return n, true
}
