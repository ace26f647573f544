package webhook

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func render(t *testing.T, tmpl string, d Data) string {
	t.Helper()
	p, err := ParseTemplate(tmpl)
	if err != nil {
		t.Fatalf("ParseTemplate(%q): %v", tmpl, err)
	}
	b, err := Render(p, d)
	if err != nil {
		t.Fatalf("Render(%q): %v", tmpl, err)
	}
	return string(b)
}

// Every variable prints as text/template prints it.
func TestRenderEveryField(t *testing.T) {
	d := Sample()
	tests := map[string]string{
		"EventID": "spot-itn-0123", "Kind": "spot-interruption", "Monitor": "SQS_MONITOR",
		"Description": d.Description, "State": "retry", "NodeName": "ip-10-0-0-1.ec2.internal",
		"InstanceID": "i-0123456789abcdef0", "ProviderID": "aws:///us-east-1a/i-0123456789abcdef0",
		"InstanceType": "m5.large", "AutoScalingGroupName": "workers",
		"StartTime": "2026-01-02 03:04:05 +0000 UTC", "EndTime": "2026-01-02 03:06:05 +0000 UTC",
		"Pods": "[web-1]", "NodeLabels": "map[kubernetes.io/os:linux]", "AvailabilityZone": "us-east-1a",
		"Cluster": "prod", "Status": "done", "Reason": "drained", "Text": d.Text, "RoutingKey": "R0UT1NGKEY",
	}
	for name, want := range tests {
		if got := render(t, "<{{ ."+name+" }}>", d); got != "<"+want+">" {
			t.Errorf("{{ .%s }} = %q, want %q", name, got, "<"+want+">")
		}
	}
	if _, ok := d.field("Nope"); ok {
		t.Error("field(Nope) found")
	}
}

func TestParseTemplate(t *testing.T) {
	d := Sample()
	for tmpl, want := range map[string]string{
		"plain text":                      "plain text",
		"":                                "",
		"{{.Kind}}":                       "spot-interruption",
		"a {{- .Kind -}} b":               "a spot-interruption b", // trim markers are accepted, not applied
		"{{ .Cluster }}/{{ .Status }}!":   "prod/done!",
		"{{ .Kind }}{{ .Kind }}":          "spot-interruptionspot-interruption",
		`{"text":"{{ .Kind }}"}`:          `{"text":"spot-interruption"}`,
		`[{{ .Pods | len }}]`:             "", // refused below
		"{{ .Status }} }} {{ .Cluster }}": "done }} prod",
	} {
		p, err := ParseTemplate(tmpl)
		if strings.Contains(tmpl, "|") {
			if err == nil {
				t.Errorf("ParseTemplate(%q) accepted a pipeline", tmpl)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseTemplate(%q): %v", tmpl, err)
			continue
		}
		if b, _ := Render(p, d); string(b) != want {
			t.Errorf("Render(%q) = %q, want %q", tmpl, b, want)
		}
	}
}

// Every problem of a template is listed at once, each quoting its action.
func TestParseTemplateErrors(t *testing.T) {
	tests := map[string][]string{
		"{{ .Kind }} {{ .Nope }} {{ .Kind": {"no variable .Nope", `"{{ .Kind" has no closing }}`},
		"{{ Kind }}":                       {"{{ Kind }}: only {{ .Field }} is offered"},
		"{{ .1Kind }}":                     {"only {{ .Field }}"},
		"{{ . }}":                          {"only {{ .Field }}"},
		"{{ .Ki-nd }}":                     {"only {{ .Field }}"},
		"{{ .Kind.X }}":                    {"only {{ .Field }}"},
		"x {{ .Kind and a long tail":       {`"{{ .Kind and a long " has no closing }}`},
		"{{ .Kind }}{{":                    {`"{{" has no closing }}`},
	}
	for tmpl, wants := range tests {
		_, err := ParseTemplate(tmpl)
		if err == nil {
			t.Errorf("ParseTemplate(%q) accepted", tmpl)
			continue
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("ParseTemplate(%q): %v, want it to say %q", tmpl, err, w)
			}
		}
	}
}

func TestValidField(t *testing.T) {
	for s, want := range map[string]bool{
		"Kind": true, "kind": true, "_x": true, "X1": true, "Zz_9": true, "X0": true, "a9z": true,
		"": false, "1X": false, "X-1": false, "X.Y": false, "Ä": false, "@": false, "[": false, "`": false, "{": false,
	} {
		if got := validField(s); got != want {
			t.Errorf("validField(%q) = %v, want %v", s, got, want)
		}
	}
}

// In a JSON template, a placeholder inside a string is JSON-escaped, one
// outside is not, and the template must render to JSON.
func TestJSONTemplate(t *testing.T) {
	d := Sample()
	d.Reason = "a \"quoted\"\nreason"
	got := render(t, ` {"r":"{{ .Reason }}","e":"say \"{{ .Reason }}\"","c":"\\","k":"{{ .Kind }}"}`, d)
	want := ` {"r":"a \"quoted\"\nreason","e":"say \"a \"quoted\"\nreason\"","c":"\\","k":"spot-interruption"}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Errorf("rendered JSON does not parse: %v", err)
	}
	if got := render(t, `[ "{{ .Reason }}" ]`, d); got != `[ "a \"quoted\"\nreason" ]` {
		t.Errorf("array template rendered %s", got)
	}
	// Not JSON: left as it is.
	if got := render(t, `text "{{ .Reason }}"`, d); got != "text \"a \"quoted\"\nreason\"" {
		t.Errorf("text template rendered %q", got)
	}
	for _, bad := range []string{`{"r":{{ .Reason }}}`, `{"r":"{{ .Reason }}"`, `[{{ .Kind }}]`} {
		if _, err := ParseTemplate(bad); err == nil || !strings.Contains(err.Error(), "does not render to JSON") {
			t.Errorf("ParseTemplate(%q): %v, want it refused as not rendering to JSON", bad, err)
		}
	}
}

func TestMarkJSON(t *testing.T) {
	tests := []struct {
		tmpl   string
		json   bool
		quoted []bool
	}{
		{`x {{ .Kind }}`, false, []bool{false}},
		{`  `, false, nil},
		{`{"a":"{{ .Kind }}","b":{{ .Cluster }}}`, true, []bool{true, false}},
		{`{"a":"\"{{ .Kind }}"}`, true, []bool{true}},
		{`{"a":"\\"{{ .Kind }}}`, true, []bool{false}},
	}
	for _, tt := range tests {
		p := &Template{}
		s := tt.tmpl
		for {
			i := strings.Index(s, "{{")
			if i < 0 {
				break
			}
			j := strings.Index(s[i:], "}}")
			p.text = append(p.text, s[:i])
			p.fields = append(p.fields, strings.TrimSpace(s[i+2 : i+j])[1:])
			s = s[i+j+2:]
		}
		p.text = append(p.text, s)
		if got := p.markJSON(); got != tt.json {
			t.Errorf("markJSON(%q) = %v, want %v", tt.tmpl, got, tt.json)
		}
		if len(tt.quoted) > 0 && !equal(p.quoted, tt.quoted) {
			t.Errorf("markJSON(%q) quoted %v, want %v", tt.tmpl, p.quoted, tt.quoted)
		}
	}
}

func equal(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A template built by hand with an unknown field fails to render.
func TestRenderUnknownField(t *testing.T) {
	p := &Template{text: []string{"a", "b"}, fields: []string{"Nope"}}
	if _, err := Render(p, Sample()); err == nil || !strings.Contains(err.Error(), "no variable .Nope") {
		t.Errorf("Render: %v, want no variable .Nope", err)
	}
}

func TestSampleAndHostile(t *testing.T) {
	s := Sample()
	if s.StartTime != time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) || s.EndTime.Sub(s.StartTime) != 2*time.Minute {
		t.Errorf("Sample times %v, %v", s.StartTime, s.EndTime)
	}
	h := hostile()
	if !strings.ContainsAny(h.Reason, "\"\\\n\t") || h.Text != h.Reason || h.Description != h.Reason {
		t.Errorf("hostile data %+v lacks the characters a reason holds", h)
	}
}

func TestParseHeaders(t *testing.T) {
	h, err := ParseHeaders(`{"x-team":"platform","Authorization":"Bearer t"}`)
	if err != nil {
		t.Fatal(err)
	}
	if h.Get("X-Team") != "platform" || h.Get("Authorization") != "Bearer t" || h.Get("Content-Type") != "application/json" || len(h) != 3 {
		t.Errorf("headers %v", h)
	}
	h, err = ParseHeaders(`{"content-type":"text/plain"}`)
	if err != nil || h.Get("Content-Type") != "text/plain" || len(h) != 1 {
		t.Errorf("headers %v, %v: want the given Content-Type alone", h, err)
	}
	_, err = ParseHeaders(`{"b b":"1","Host":"x","X-A":"a\nb","X-N":"n\u0000","X-R":"r\rs","Upgrade":"h2","Te":"x","": "e"}`)
	if err == nil {
		t.Fatal("bad headers accepted")
	}
	msg := err.Error()
	for _, w := range []string{`header "b b": not a valid header name`, `header "Host": set by the HTTP client`,
		`header "X-A": its value holds a line break`, `header "X-N"`, `header "X-R"`, `header "Upgrade"`, `header "Te"`, `header "": not a valid`} {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q, want it to say %q", msg, w)
		}
	}
	if strings.Index(msg, `"Host"`) > strings.Index(msg, `"X-A"`) || strings.Index(msg, `""`) > strings.Index(msg, `"Host"`) {
		t.Errorf("error %q: problems not in the order of their names", msg)
	}
	if _, err := ParseHeaders(`["a"]`); err == nil || !strings.Contains(err.Error(), "JSON object") {
		t.Errorf("a JSON array: %v", err)
	}
}

func TestValidName(t *testing.T) {
	for s, want := range map[string]bool{
		"X-Team": true, "x_9": true, "!#$%&'*+-.^_`|~": true, "Z": true, "a": true, "0": true,
		"": false, "a b": false, "a:b": false, "ä": false, "a\"": false, "@": false, "[": false, "{": false, "/": false,
	} {
		if got := validName(s); got != want {
			t.Errorf("validName(%q) = %v, want %v", s, got, want)
		}
	}
}

// A template whose JSON strings were never marked renders its fields as
// they are.
func TestRenderUnmarked(t *testing.T) {
	p := &Template{text: []string{`"`, `"`}, fields: []string{"Reason"}}
	d := Sample()
	d.Reason = `a "b"`
	if b, err := Render(p, d); err != nil || string(b) != `"a "b""` {
		t.Errorf("Render = %s, %v", b, err)
	}
}
