package main

import (
	"strings"
	"testing"
)

// TestCheck: only a clean checkout of the tag vVERSION makes a release.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		tag   string
		dirty bool
		says  string // "" when allowed
	}{
		{"v0.2.0", false, ""},
		{"", false, "not tagged v0.2.0"},
		{"v0.1.0", false, "tagged v0.1.0, not v0.2.0"},
		{"0.2.0", false, "not v0.2.0"},
		{"v0.2.0", true, "has changes"},
	} {
		err := check("0.2.0", tc.tag, tc.dirty)
		switch {
		case tc.says == "" && err != nil:
			t.Errorf("tag %q dirty %v: refused (%v), want allowed", tc.tag, tc.dirty, err)
		case tc.says != "" && (err == nil || !strings.Contains(err.Error(), tc.says)):
			t.Errorf("tag %q dirty %v: %v, want refused saying %q", tc.tag, tc.dirty, err, tc.says)
		}
	}
}
