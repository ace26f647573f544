package stack

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
)

// TestStandaloneValueParameters: requiredTag, maxConcurrency and
// alarmEmail come from parameters, defaulting to the values the template
// was made with, and the email subscription exists only when AlarmEmail
// is set.
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
		if got := tpl.render(fn["ReservedConcurrentExecutions"]); got != "${MaxConcurrency}" {
			t.Errorf("ReservedConcurrentExecutions = %s, want the MaxConcurrency parameter", got)
		}
		esm := tpl.ofType("AWS::Lambda::EventSourceMapping")
		if len(esm) != 1 {
			t.Fatalf("%d event source mappings, want 1", len(esm))
		}
		if got := tpl.render(esm[0].Properties["ScalingConfig"]); got != `{"MaximumConcurrency":"${MaxConcurrency}"}` {
			t.Errorf("ScalingConfig = %s, want the MaxConcurrency parameter", got)
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
