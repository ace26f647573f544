package awsfake

import (
	"encoding/xml"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Stack is a CloudFormation stack DescribeStacks reports, with its outputs.
type Stack struct {
	Name    string
	Status  string            // CREATE_COMPLETE when empty
	Outputs map[string]string // OutputKey → OutputValue
	Tags    map[string]string
}

// AddStack makes a stack visible to DescribeStacks, replacing one of the
// same name.
func (s *Server) AddStack(st Stack) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.more.stacks = append(slices.DeleteFunc(s.more.stacks, func(o Stack) bool { return o.Name == st.Name }), st)
}

// AddFunction makes a Lambda function's configuration, with its
// environment, visible to GetFunctionConfiguration.
func (s *Server) AddFunction(name string, env map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.more.funcs == nil {
		s.more.funcs = map[string]map[string]string{}
	}
	s.more.funcs[name] = maps.Clone(env)
}

const cloudFormationNS = "http://cloudformation.amazonaws.com/doc/2010-05-15/"

// describeStacks answers DescribeStacks for one StackName as
// CloudFormation does, a ValidationError for a stack that does not exist.
func (s *Server) describeStacks(w http.ResponseWriter, form url.Values, fault Fault) {
	if fault != 0 {
		queryFault(w, ServiceCloudFormation, "DescribeStacks", fault)
		return
	}
	name := form.Get("StackName")
	s.mu.Lock()
	i := slices.IndexFunc(s.more.stacks, func(st Stack) bool { return st.Name == name })
	var st Stack
	if i >= 0 {
		st = s.more.stacks[i]
	}
	s.mu.Unlock()
	if name == "" || i < 0 {
		writeQueryError(w, http.StatusBadRequest, "ValidationError", "Stack with id "+name+" does not exist")
		return
	}
	type output struct {
		Key   string `xml:"OutputKey"`
		Value string `xml:"OutputValue"`
	}
	type tag struct {
		Key   string `xml:"Key"`
		Value string `xml:"Value"`
	}
	type member struct {
		Name         string   `xml:"StackName"`
		ID           string   `xml:"StackId"`
		Status       string   `xml:"StackStatus"`
		CreationTime string   `xml:"CreationTime"`
		Outputs      []output `xml:"Outputs>member"`
		Tags         []tag    `xml:"Tags>member"`
	}
	m := member{Name: st.Name, Status: st.Status, CreationTime: "2026-01-01T00:00:00Z",
		ID: "arn:aws:cloudformation:" + Region + ":111122223333:stack/" + st.Name + "/00000000-0000-4000-8000-000000000000"}
	if m.Status == "" {
		m.Status = "CREATE_COMPLETE"
	}
	for _, k := range slices.Sorted(maps.Keys(st.Outputs)) {
		m.Outputs = append(m.Outputs, output{k, st.Outputs[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(st.Tags)) {
		m.Tags = append(m.Tags, tag{k, st.Tags[k]})
	}
	writeXML(w, http.StatusOK, struct {
		XMLName   xml.Name
		Stacks    []member `xml:"DescribeStacksResult>Stacks>member"`
		RequestID string   `xml:"ResponseMetadata>RequestId"`
	}{XMLName: xml.Name{Space: cloudFormationNS, Local: "DescribeStacksResponse"}, Stacks: []member{m}, RequestID: requestID})
}

// getFunctionConfiguration answers Lambda's GET
// /2015-03-31/functions/NAME/configuration.
func (s *Server) getFunctionConfiguration(w http.ResponseWriter, r *http.Request, fault Fault) {
	raw := strings.TrimSuffix(strings.TrimPrefix(r.URL.EscapedPath(), lambdaPrefix), "/configuration")
	name, err := url.PathUnescape(raw)
	if fault != 0 && fault != NotFound {
		restFault(w, ServiceLambda, "GetFunctionConfiguration", fault)
		return
	}
	s.mu.Lock()
	env, ok := s.more.funcs[name]
	s.mu.Unlock()
	if err != nil || !ok || fault == NotFound {
		writeJSONError(w, http.StatusNotFound, "ResourceNotFoundException",
			"Function not found: arn:aws:lambda:"+Region+":111122223333:function:"+name)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"FunctionName": name,
		"FunctionArn":  "arn:aws:lambda:" + Region + ":111122223333:function:" + name,
		"Runtime":      "provided.al2023",
		"Environment":  map[string]any{"Variables": env},
	})
}
