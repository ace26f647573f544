package main

import "testing"

// The admission policies carry a release's number; a development build's
// stack tag and command are of the release they lead up to.
func TestBaseVersion(t *testing.T) {
	for in, want := range map[string]string{
		"0.1.0": "0.1.0", "0.1.0-dev+0123abc": "0.1.0", "0.1.0-dev+0123abc-dirty": "0.1.0",
		"0.2.0-rc.1": "0.2.0-rc.1", "0.2.0-rc.1.dev+0123abc": "0.2.0-rc.1", "": "",
	} {
		if got := baseVersion(in); got != want {
			t.Errorf("baseVersion(%q) = %q, want %q", in, got, want)
		}
	}
}
