package main

import (
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/drainpipe/drainpipe/internal/preflight"
)

// Every object the versions finding compares has a reader: on an empty
// cluster each is not found (left to the other findings), never an error.
func TestObjectLabelsReadsEveryKind(t *testing.T) {
	k := fake.NewClientset()
	for _, o := range preflight.VersionedObjects() {
		if _, err := objectLabels(t.Context(), k, o); !objectMissing(err) {
			t.Errorf("%s: %v, want not found", o, err)
		}
	}
	if _, err := objectLabels(t.Context(), k, preflight.Object{Kind: "Deployment", Name: "x"}); err == nil || objectMissing(err) {
		t.Errorf("an unknown kind: %v, want an error", err)
	}
}
