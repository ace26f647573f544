package event

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// seedBodies are the message bodies of testdata, the seed of the fuzz
// targets.
func seedBodies(f *testing.F) [][]byte {
	f.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed corpus in testdata: %v", err)
	}
	var out [][]byte
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// checkRejection fails unless err is a rejection that says why.
func checkRejection(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrRejected) || strings.TrimPrefix(err.Error(), ErrRejected.Error()+": ") == "" {
		t.Fatalf("error %v is not a rejection with a reason", err)
	}
}

// FuzzSNSUnwrap wraps any body in an SNS envelope of any type and checks
// that unwrapping changes nothing: a Notification means what its Message
// means on its own (same interruptions, same ignore reason, accepted or
// rejected alike), an envelope inside an envelope is refused, the two
// confirmation types are ignored with a reason and any other type refused.
func FuzzSNSUnwrap(f *testing.F) {
	for _, b := range seedBodies(f) {
		f.Add(b, "Notification", "arn:aws:sns:us-east-1:123456789012:drainpipe")
	}
	f.Add([]byte(sns(directHook)), "Notification", "")
	f.Add([]byte(`{}`), "SubscriptionConfirmation", "t")
	f.Add([]byte(`{}`), "Notificatio", "t")
	f.Fuzz(func(t *testing.T, inner []byte, typ, topic string) {
		if !utf8.Valid(inner) || !utf8.ValidString(typ) {
			return // JSON would carry another text than inner
		}
		// Signed as SNS signs: the certificate on SNS's own host for the
		// topic's region (any host when the topic is malformed).
		n := snsEnvelope{Type: typ, TopicArn: topic, Message: string(inner), SignatureVersion: "1",
			Signature: "c2lnbmF0dXJl", SigningCertURL: "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-1.pem"}
		if m := snsTopic(topic); m != nil && snsDomains[m[1]] != "" {
			n.SigningCertURL = "https://sns." + m[2] + "." + snsDomains[m[1]] + "/SimpleNotificationService-1.pem"
		}
		env, err := json.Marshal(map[string]string{"Type": typ, "TopicArn": topic, "MessageId": "m-1", "Message": string(inner),
			"SignatureVersion": n.SignatureVersion, "Signature": n.Signature, "SigningCertURL": n.SigningCertURL})
		if err != nil {
			t.Fatal(err)
		}
		got, gerr := Parse(env)
		if gerr != nil {
			checkRejection(t, gerr)
		}
		if len(env) > MaxBodySize {
			if gerr == nil {
				t.Fatalf("a %d-byte envelope was accepted", len(env))
			}
			return
		}
		if got.Shape != ShapeSNS {
			t.Fatalf("envelope read as shape %q", got.Shape)
		}
		switch {
		case typ == "SubscriptionConfirmation" || typ == "UnsubscribeConfirmation":
			if gerr != nil || got.IgnoreReason == "" || len(got.Interruptions) > 0 {
				t.Fatalf("%s: %+v, %v; want ignored with a reason", typ, got, gerr)
			}
			return
		case typ != "Notification" || len(inner) == 0:
			if gerr == nil {
				t.Fatalf("type %q, message %q: accepted as %+v", typ, inner, got)
			}
			return
		case checkSNSEnvelope(n) != nil:
			if gerr == nil {
				t.Fatalf("topic %q: an envelope SNS could not have sent was accepted as %+v", topic, got)
			}
			return
		}
		alone, aerr := Parse(inner)
		if alone.Shape == ShapeSNS {
			if gerr == nil {
				t.Fatalf("an envelope inside an envelope was accepted: %+v", got)
			}
			return
		}
		if (gerr == nil) != (aerr == nil) {
			t.Fatalf("wrapped: %v; alone: %v; want both accepted or both rejected", gerr, aerr)
		}
		if gerr == nil && (got.IgnoreReason != alone.IgnoreReason || !reflect.DeepEqual(got.Interruptions, alone.Interruptions)) {
			t.Fatalf("wrapped means %+v, alone %+v", got, alone)
		}
	})
}

// FuzzAutoScalingDirect builds the notification Auto Scaling sends
// straight to a queue from any field values and checks: no panic; a
// refusal says why; a lifecycle action is accepted only with a valid
// instance id and carries exactly the group, hook, token, instance,
// request id and account it was sent with, as the kind its transition
// names; anything else accepted is ignored with a reason; and the same
// notification wrapped in SNS means the same.
func FuzzAutoScalingDirect(f *testing.F) {
	for _, b := range seedBodies(f) {
		var n notification
		if json.Unmarshal(b, &n) == nil && n.Service != "" {
			f.Add(n.Service, n.Event, n.LifecycleTransition, n.LifecycleActionToken, n.AutoScalingGroupName,
				n.LifecycleHookName, n.EC2InstanceID, n.Time, n.AccountID, n.RequestID)
		}
	}
	f.Add(autoScalingService, "", TransitionLaunching, "71514b9d-6a40-4b26-8523-05e7eEXAMPLE", "my-asg", "hook",
		"i-0598c7d356eba48d7", "", "", "r-1")
	f.Fuzz(func(t *testing.T, service, evt, transition, token, group, hook, instance, when, account, request string) {
		fields := []string{service, evt, transition, token, group, hook, instance, when, account, request}
		for _, s := range fields {
			if !utf8.ValidString(s) {
				return // JSON would carry another text
			}
		}
		body, err := json.Marshal(map[string]string{"Service": service, "Event": evt, "LifecycleTransition": transition,
			"LifecycleActionToken": token, "AutoScalingGroupName": group, "LifecycleHookName": hook,
			"EC2InstanceId": instance, "Time": when, "AccountId": account, "RequestId": request})
		if err != nil {
			t.Fatal(err)
		}
		got, gerr := Parse(body)
		if got.Shape != ShapeASGDirect {
			t.Fatalf("read as shape %q", got.Shape)
		}
		wrapped, werr := Parse([]byte(sns(string(body))))
		if (gerr == nil) != (werr == nil) || (gerr == nil && !reflect.DeepEqual(got.Interruptions, wrapped.Interruptions)) {
			t.Fatalf("alone %+v, %v; wrapped in SNS %+v, %v: want the same", got, gerr, wrapped, werr)
		}
		if gerr != nil {
			checkRejection(t, gerr)
			return
		}
		if service != autoScalingService {
			t.Fatalf("accepted a notification from service %q", service)
		}
		if len(got.Interruptions) == 0 {
			if got.IgnoreReason == "" || evt == "" {
				t.Fatalf("ignored %+v: want a reason, and only a notification naming an event", got)
			}
			return
		}
		in := got.Interruptions[0]
		want := map[string]Kind{TransitionTerminating: KindASGLifecycle, TransitionLaunching: KindASGLaunchLifecycle}[transition]
		lc := in.Lifecycle
		switch {
		case len(got.Interruptions) != 1 || in.Kind != want || lc == nil:
			t.Fatalf("transition %q gave %+v; want one %s", transition, got.Interruptions, want)
		case !ValidInstanceID(instance) || !reflect.DeepEqual(in.Instances, []string{instance}) || lc.InstanceID != instance:
			t.Fatalf("instance %q gave %+v", instance, in)
		case lc.ASG != group || lc.Hook != hook || lc.Token != token || in.EventID != request || in.Account != account:
			t.Fatalf("fields %q gave %+v, lifecycle %+v", fields, in, lc)
		case group == "" || hook == "" || token == "" || request == "":
			t.Fatalf("accepted a lifecycle action without a group, hook, token or request id: %+v", lc)
		}
	})
}
