// Package webhook holds what an operator may shape in a webhook message:
// a template over the variables aws-node-termination-handler's
// webhookTemplate sees, and extra request headers. It parses and checks
// both where the configuration is loaded, so a bad one stops the
// function at start instead of failing every message later.
package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Data is what a template sees. Its first fields bear the names of NTH's
// InterruptionEvent, so NTH's templates render unchanged; Drainpipe fills
// what it knows and leaves the rest empty. The last ones are Drainpipe's.
type Data struct {
	EventID              string
	Kind                 string
	Monitor              string
	Description          string
	State                string
	NodeName             string
	InstanceID           string
	ProviderID           string
	InstanceType         string
	AutoScalingGroupName string
	StartTime            time.Time
	EndTime              time.Time
	Pods                 []string
	NodeLabels           map[string]string
	AvailabilityZone     string

	// Cluster is the EKS cluster of the node.
	Cluster string
	// Status is "done" or "retry".
	Status string
	// Reason says what was done, or why it is not finished.
	Reason string
	// Text is the sentence Drainpipe sends without a template.
	Text string
	// RoutingKey is the webhook secret's routing key (PagerDuty Events
	// v2's routing_key), empty when it holds none.
	RoutingKey string
}

// Sample is the data a template is tried on at start.
func Sample() Data {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return Data{
		EventID: "spot-itn-0123", Kind: "spot-interruption", Monitor: "SQS_MONITOR",
		Description: "spot-interruption on instance i-0123456789abcdef0", State: "retry",
		NodeName: "ip-10-0-0-1.ec2.internal", InstanceID: "i-0123456789abcdef0",
		ProviderID: "aws:///us-east-1a/i-0123456789abcdef0", InstanceType: "m5.large",
		AutoScalingGroupName: "workers", StartTime: at, EndTime: at.Add(2 * time.Minute),
		Pods: []string{"web-1"}, NodeLabels: map[string]string{"kubernetes.io/os": "linux"},
		AvailabilityZone: "us-east-1a", Cluster: "prod", Status: "done", Reason: "drained",
		Text: "Drainpipe: spot-interruption on instance i-0123456789abcdef0", RoutingKey: "R0UT1NGKEY",
	}
}

// hostile is Sample with the characters a real reason holds (quotes, a
// backslash, a line break, a tab): a JSON template must stay JSON with it.
func hostile() Data {
	d := Sample()
	d.Reason = "evicting \"web-1\": Cannot evict pod as it would violate the pod's disruption budget.\n\tC:\\ <!channel> & more"
	d.Description, d.Text = d.Reason, d.Reason
	return d
}

// Template is a body with {{ .Field }} placeholders. It is not Go's
// text/template: executing one reaches reflect's method lookup, which
// makes the linker keep every exported method and triples the function's
// binary. NTH's templates substitute fields only, which this covers;
// actions (if, range, pipelines) are refused at start.
//
// A template whose text starts with { or [ is JSON: a placeholder inside
// one of its strings is filled JSON-escaped (a quote in a reason must not
// end the string), and the template must render to valid JSON.
type Template struct {
	text   []string // text[i] comes before fields[i]; one more text than fields
	fields []string
	quoted []bool // fields[i] sits inside a JSON string
}

// ParseTemplate parses a template and executes it once on Sample, so a
// misspelt variable is reported at start.
func ParseTemplate(s string) (*Template, error) {
	t := &Template{}
	var errs []error
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			break
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			errs = append(errs, fmt.Errorf("parsing the template: %q has no closing }}", s[i:min(len(s), i+20)]))
			break
		}
		act := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s[i+2:i+j], "-"), "-"))
		name, ok := strings.CutPrefix(act, ".")
		if !ok || !validField(name) {
			errs = append(errs, fmt.Errorf("parsing the template: {{%s}}: only {{ .Field }} is offered", s[i+2:i+j]))
		} else if _, known := Sample().field(name); !known {
			errs = append(errs, fmt.Errorf("executing the template: no variable .%s", name))
		}
		t.text = append(t.text, s[:i])
		t.fields = append(t.fields, name)
		s = s[i+j+2:]
	}
	t.text = append(t.text, s)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if t.markJSON() {
		b, _ := Render(t, hostile())
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("the template starts as JSON but does not render to JSON: %w", err)
		}
	}
	return t, nil
}

// markJSON sets quoted for a JSON template's placeholders that sit inside
// a string, and reports whether the template is JSON.
func (t *Template) markJSON() bool {
	t.quoted = make([]bool, len(t.fields))
	if first := strings.TrimSpace(t.text[0]); first == "" || (first[0] != '{' && first[0] != '[') {
		return false
	}
	in, escaped := false, false
	for i, text := range t.text {
		for _, c := range text {
			switch {
			case escaped:
				escaped = false
			case in && c == '\\':
				escaped = true
			case c == '"':
				in = !in
			}
		}
		if i < len(t.fields) {
			t.quoted[i] = in
		}
	}
	return true
}

func validField(s string) bool {
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// Render fills t's placeholders from d, printed as text/template would,
// JSON-escaped inside a JSON template's strings.
func Render(t *Template, d Data) ([]byte, error) {
	var b bytes.Buffer
	for i, name := range t.fields {
		b.WriteString(t.text[i])
		v, ok := d.field(name)
		if !ok {
			return nil, fmt.Errorf("executing the template: no variable .%s", name)
		}
		if i < len(t.quoted) && t.quoted[i] {
			q, _ := json.Marshal(v) // a string always marshals
			v = string(q[1 : len(q)-1])
		}
		b.WriteString(v)
	}
	b.WriteString(t.text[len(t.fields)])
	return b.Bytes(), nil
}

// field is the named field printed, and whether there is one.
func (d Data) field(name string) (string, bool) {
	switch name {
	case "EventID":
		return d.EventID, true
	case "Kind":
		return d.Kind, true
	case "Monitor":
		return d.Monitor, true
	case "Description":
		return d.Description, true
	case "State":
		return d.State, true
	case "NodeName":
		return d.NodeName, true
	case "InstanceID":
		return d.InstanceID, true
	case "ProviderID":
		return d.ProviderID, true
	case "InstanceType":
		return d.InstanceType, true
	case "AutoScalingGroupName":
		return d.AutoScalingGroupName, true
	case "StartTime":
		return d.StartTime.String(), true
	case "EndTime":
		return d.EndTime.String(), true
	case "Pods":
		return fmt.Sprint(d.Pods), true
	case "NodeLabels":
		return fmt.Sprint(d.NodeLabels), true
	case "AvailabilityZone":
		return d.AvailabilityZone, true
	case "Cluster":
		return d.Cluster, true
	case "Status":
		return d.Status, true
	case "Reason":
		return d.Reason, true
	case "Text":
		return d.Text, true
	case "RoutingKey":
		return d.RoutingKey, true
	}
	return "", false
}

// refused are headers the HTTP client sets itself or that describe one
// connection only (hop-by-hop): setting them would break the request.
var refused = map[string]bool{
	"Host": true, "Content-Length": true, "Connection": true, "Keep-Alive": true,
	"Proxy-Connection": true, "Proxy-Authenticate": true, "Proxy-Authorization": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
}

// ParseHeaders reads a JSON object of header names to values (NTH's
// webhookHeaders). Content-Type is application/json unless given. Every
// problem is listed at once.
func ParseHeaders(s string) (http.Header, error) {
	var m map[string]string
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("want a JSON object of header names to string values: %w", err)
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	h := http.Header{}
	var errs []error
	for _, k := range names {
		v := m[k]
		switch ck := http.CanonicalHeaderKey(k); {
		case !validName(k):
			errs = append(errs, fmt.Errorf("header %q: not a valid header name", k))
		case refused[ck]:
			errs = append(errs, fmt.Errorf("header %q: set by the HTTP client, or hop-by-hop; refused", k))
		case strings.ContainsAny(v, "\r\n\x00"):
			errs = append(errs, fmt.Errorf("header %q: its value holds a line break or NUL", k))
		default:
			h.Set(ck, v)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	return h, nil
}

// validName reports whether s is an HTTP token (RFC 9110 §5.6.2).
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return true
}
