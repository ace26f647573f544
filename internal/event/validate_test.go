package event

import (
	"strings"
	"testing"
)

// The accepted shapes: none listed accepts all; a list is read trimmed,
// once each, and must name one.
func TestShapes(t *testing.T) {
	if got := Shapes(nil).String(); got != "eventbridge,asg-direct,sns" {
		t.Errorf("Shapes(nil) = %q, want every shape", got)
	}
	got, err := ParseShapes(" sns, sns ,eventbridge")
	if err != nil || got.String() != "sns,eventbridge" {
		t.Errorf("ParseShapes = %v, %v; want sns,eventbridge", got, err)
	}
	for _, bad := range []string{"nope", " , "} {
		if _, err := ParseShapes(bad); err == nil {
			t.Errorf("ParseShapes(%q): no error", bad)
		}
	}
	if CheckShape("", got) != nil || CheckShape(ShapeSNS, got) != nil || CheckShape(ShapeASGDirect, nil) != nil {
		t.Error("CheckShape rejected an unknown shape, a listed one, or one with none listed")
	}
	if CheckShape(ShapeASGDirect, got) == nil {
		t.Error("CheckShape accepted a shape not listed")
	}
}

// A signature may take up to maxSignature base64 characters.
func TestSNSSignatureBound(t *testing.T) {
	n := snsEnvelope{TopicArn: "arn:aws:sns:eu-west-1:123456789012:t", SignatureVersion: "1",
		SigningCertURL: "https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-1.pem",
		Signature:      strings.Repeat("AAAA", maxSignature/4)}
	if err := checkSNSEnvelope(n); err != nil {
		t.Errorf("a %d-character signature: %v", len(n.Signature), err)
	}
	n.Signature += "AAAA"
	if err := checkSNSEnvelope(n); err == nil {
		t.Errorf("a %d-character signature: accepted", len(n.Signature))
	}
}

// A name may be 255 printable characters long.
func TestCheckNameBound(t *testing.T) {
	if err := checkName("name", strings.Repeat("n", 255)); err != nil {
		t.Errorf("a 255-character name: %v", err)
	}
	for _, bad := range []string{strings.Repeat("n", 256), "tab\there", ""} {
		if err := checkName("name", bad); err == nil {
			t.Errorf("checkName(%q): accepted", clip(bad))
		}
	}
}

// clip keeps 64 bytes of a value, marking what it cut.
func TestClip(t *testing.T) {
	s := strings.Repeat("c", 64)
	if clip(s) != s || clip(s+"d") != s+"..." {
		t.Errorf("clip of 64 bytes = %q, of 65 = %q", clip(s), clip(s+"d"))
	}
}
