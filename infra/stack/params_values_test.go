package stack

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
)

// TestStandaloneValueParameters: requiredTag, maxConcurrency and
// alarmEmail come from parameters, defaulting to the values the template
// was made with, and the email subscription exists only when AlarmEmail
// is set. The cordon queue's event source keeps cordonConcurrency.
func TestStandaloneValueParameters(t *testing.T) {
	for _, email := range []string{"", "ops@example.com"} {
		p := testProps(t)
		p.RequiredTag = "team=platform"
		p.MaxConcurrency = 20
		p.AlarmEmail = email
		s, err := NewStandalone(awscdk.NewApp(nil), "Standalone", p)
		if err != nil {
			t.Fatalf("NewStandalone: %v", err)
		}
		tpl := templateOf(t, s)
		fn := tpl.byAlias(t, "Function").Properties
		vars := fn["Environment"].(map[string]any)["Variables"].(map[string]any)
		if got := tpl.render(vars["DRAINPIPE_REQUIRED_TAG"]); got != "${RequiredTag}" {
			t.Errorf("DRAINPIPE_REQUIRED_TAG = %s, want the RequiredTag parameter", got)
		}
		// The parameter plus cordonConcurrency, for any value it takes.
		for _, mc := range []int{2, 20, 1000} {
			if got := followed(t, fn["ReservedConcurrentExecutions"], mc); got != mc+defaultCordonConcurrency {
				t.Errorf("ReservedConcurrentExecutions with MaxConcurrency %d = %d, want %d", mc, got, mc+defaultCordonConcurrency)
			}
		}
		esm := eventSources(t, tpl)
		if got := esm["${Queue.Arn}"]["ScalingConfig"]; got != `{"MaximumConcurrency":"${MaxConcurrency}"}` {
			t.Errorf("ScalingConfig = %s, want the MaxConcurrency parameter", got)
		}
		if want := fmt.Sprintf(`{"MaximumConcurrency":%d}`, defaultCordonConcurrency); esm["${CordonQueue.Arn}"]["ScalingConfig"] != want {
			t.Errorf("cordon queue's ScalingConfig = %s, want %s (cordonConcurrency, not the parameter)", esm["${CordonQueue.Arn}"]["ScalingConfig"], want)
		}
		subs := tpl.ofType("AWS::SNS::Subscription")
		var emailSubs []resource
		for _, r := range subs {
			if r.Properties["Protocol"] == "email" {
				emailSubs = append(emailSubs, r)
			}
		}
		if len(emailSubs) != 1 || emailSubs[0].Condition != "HasAlarmEmail" || tpl.render(emailSubs[0].Properties["Endpoint"]) != "${AlarmEmail}" {
			t.Errorf("alarmEmail %q: email subscriptions %+v, want one, on condition HasAlarmEmail, to the AlarmEmail parameter", email, emailSubs)
		}
		for name, want := range map[string]any{"RequiredTag": "team=platform", "MaxConcurrency": float64(20), "AlarmEmail": email} {
			if got := tpl.Parameters[name].Default; got != want {
				t.Errorf("parameter %s defaults to %v (%T), want %v", name, got, got, want)
			}
		}
	}
}

// followed evaluates the reserved concurrency that follows MaxConcurrency
// (an element, picked by the parameter, of a split list) for value mc.
func followed(t *testing.T, v any, mc int) int {
	t.Helper()
	var sel struct {
		Select []json.RawMessage `json:"Fn::Select"`
	}
	var split struct {
		Split []string `json:"Fn::Split"`
	}
	b, _ := json.Marshal(v)
	if err := json.Unmarshal(b, &sel); err != nil || len(sel.Select) != 2 || string(sel.Select[0]) != `{"Ref":"MaxConcurrency"}` {
		t.Fatalf("reserved concurrency %s: not a Fn::Select by the MaxConcurrency parameter", b)
	}
	if err := json.Unmarshal(sel.Select[1], &split); err != nil || len(split.Split) != 2 {
		t.Fatalf("reserved concurrency %s: not a Fn::Select from a Fn::Split", b)
	}
	list := strings.Split(split.Split[1], split.Split[0])
	if mc >= len(list) {
		t.Fatalf("reserved concurrency %s: no element %d", b, mc)
	}
	n, err := strconv.Atoi(list[mc])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStandaloneReservation: without the cordon queue the reservation
// follows MaxConcurrency itself; with a reservation of its own,
// MaxConcurrency leaves cordonConcurrency of it to the cordon queue.
func TestStandaloneReservation(t *testing.T) {
	p := testProps(t)
	p.CordonConcurrency = -1
	s, err := NewStandalone(awscdk.NewApp(nil), "Standalone", p)
	if err != nil {
		t.Fatalf("NewStandalone: %v", err)
	}
	tpl := templateOf(t, s)
	if got := tpl.render(tpl.byAlias(t, "Function").Properties["ReservedConcurrentExecutions"]); got != "${MaxConcurrency}" {
		t.Errorf("no cordon queue: ReservedConcurrentExecutions = %s, want the MaxConcurrency parameter", got)
	}
	p = testProps(t)
	p.ReservedConcurrency = 50
	if s, err = NewStandalone(awscdk.NewApp(nil), "Standalone", p); err != nil {
		t.Fatalf("NewStandalone: %v", err)
	}
	raw, err := json.Marshal(assertions.Template_FromStack(s, nil).ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	var tpl2 struct {
		Parameters map[string]struct{ MaxValue float64 }
		Resources  map[string]resource
	}
	if err := json.Unmarshal(raw, &tpl2); err != nil {
		t.Fatal(err)
	}
	if got := tpl2.Parameters["MaxConcurrency"].MaxValue; got != float64(50-defaultCordonConcurrency) {
		t.Errorf("MaxConcurrency's MaxValue = %v, want reservedConcurrency 50 less cordonConcurrency %d", got, defaultCordonConcurrency)
	}
	if got := number(tpl2.Resources[FunctionLogicalID].Properties["ReservedConcurrentExecutions"]); got != 50 {
		t.Errorf("ReservedConcurrentExecutions = %v, want reservedConcurrency 50", got)
	}
}
