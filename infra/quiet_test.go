package main

import (
	"strings"
	"testing"
)

// The jsii runtime's exit report is dropped, whatever surrounds it; every
// other line passes unchanged.
func TestFilterLinesDropsJSIINoise(t *testing.T) {
	in := "drainpipe infra: warning: context key \"x\" is not used\n" + jsiiNoise + "\n" +
		"Successfully synthesized\n" + jsiiNoise
	var out strings.Builder
	filterLines(strings.NewReader(in), &out)
	want := "drainpipe infra: warning: context key \"x\" is not used\nSuccessfully synthesized\n"
	if out.String() != want {
		t.Errorf("filtered = %q, want %q", out.String(), want)
	}
}
