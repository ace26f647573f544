package awsfake

import (
	"encoding/xml"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
)

// AutoScalingGroup is a group DescribeAutoScalingGroups lists; its hooks
// are those AddLifecycleHook defined for its name.
type AutoScalingGroup struct {
	Name string
	Tags map[string]string
}

// AddAutoScalingGroup makes a group visible to DescribeAutoScalingGroups,
// replacing one of the same name.
func (s *Server) AddAutoScalingGroup(g AutoScalingGroup) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.more.groups = append(slices.DeleteFunc(s.more.groups, func(o AutoScalingGroup) bool { return o.Name == g.Name }), g)
}

type asgTag struct {
	Key               string `xml:"Key"`
	Value             string `xml:"Value"`
	ResourceID        string `xml:"ResourceId"`
	ResourceType      string `xml:"ResourceType"`
	PropagateAtLaunch bool   `xml:"PropagateAtLaunch"`
}

type asgMember struct {
	Name            string   `xml:"AutoScalingGroupName"`
	ARN             string   `xml:"AutoScalingGroupARN"`
	MinSize         int      `xml:"MinSize"`
	MaxSize         int      `xml:"MaxSize"`
	DesiredCapacity int      `xml:"DesiredCapacity"`
	Tags            []asgTag `xml:"Tags>member"`
}

// asgPage is DescribeAutoScalingGroups' default and largest page.
const asgPage = 100

// describeAutoScalingGroups answers as Auto Scaling does: the named
// groups (AutoScalingGroupNames.member.N) or all, in pages of MaxRecords
// (at most 100) with a NextToken.
func (s *Server) describeAutoScalingGroups(w http.ResponseWriter, form url.Values, fault Fault) {
	if fault != 0 {
		s.lifecycleFault(w, "DescribeAutoScalingGroups", form, fault)
		return
	}
	var names []string
	for i := 1; form.Has("AutoScalingGroupNames.member." + strconv.Itoa(i)); i++ {
		names = append(names, form.Get("AutoScalingGroupNames.member."+strconv.Itoa(i)))
	}
	size := asgPage
	if v := form.Get("MaxRecords"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > asgPage {
			writeQueryError(w, http.StatusBadRequest, "ValidationError", "MaxRecords must be from 1 to 100")
			return
		}
		size = n
	}
	s.mu.Lock()
	var all []AutoScalingGroup
	for _, g := range s.more.groups {
		if len(names) == 0 || slices.Contains(names, g.Name) {
			all = append(all, g)
		}
	}
	s.mu.Unlock()
	start := 0
	if tok := form.Get("NextToken"); tok != "" {
		n, err := strconv.Atoi(tok)
		if err != nil || n < 0 || n > len(all) {
			writeQueryError(w, http.StatusBadRequest, "InvalidNextToken", "The token is invalid")
			return
		}
		start = n
	}
	end := min(start+size, len(all))
	resp := struct {
		XMLName   xml.Name
		Groups    []asgMember `xml:"DescribeAutoScalingGroupsResult>AutoScalingGroups>member"`
		NextToken string      `xml:"DescribeAutoScalingGroupsResult>NextToken,omitempty"`
		RequestID string      `xml:"ResponseMetadata>RequestId"`
	}{XMLName: xml.Name{Space: autoScalingNS, Local: "DescribeAutoScalingGroupsResponse"}, RequestID: requestID}
	for _, g := range all[start:end] {
		m := asgMember{Name: g.Name, ARN: "arn:aws:autoscaling:" + Region + ":111122223333:autoScalingGroup:" +
			"00000000-0000-4000-8000-000000000000:autoScalingGroupName/" + g.Name, MaxSize: 10}
		for _, k := range slices.Sorted(maps.Keys(g.Tags)) {
			m.Tags = append(m.Tags, asgTag{Key: k, Value: g.Tags[k], ResourceID: g.Name, ResourceType: "auto-scaling-group", PropagateAtLaunch: true})
		}
		resp.Groups = append(resp.Groups, m)
	}
	if end < len(all) {
		resp.NextToken = strconv.Itoa(end)
	}
	writeXML(w, http.StatusOK, resp)
}
