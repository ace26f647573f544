package config

import (
	"strings"
	"testing"

	"github.com/drainpipe/drainpipe/test/regexcost"
)

// The package's patterns compile at every cold start: a counted repetition
// such as {1,255} expands to hundreds of instructions (see the event
// package's test of the same name). Lengths are checked apart.
func TestPatternsAreSmall(t *testing.T) {
	regexcost.Check(t, map[string]string{
		"asg": asgName.re.String(), "hook": hookName.re.String(), "cluster": clusterName.re.String(),
		"secret": secretARN.String(),
	})
}

func TestBoundedNames(t *testing.T) {
	for _, c := range []struct {
		p    interface{ MatchString(string) bool }
		s    string
		want bool
	}{
		{asgName, strings.Repeat("g", 255), true},
		{asgName, strings.Repeat("g", 256), false},
		{asgName, "a:b", false},
		{hookName, strings.Repeat("h", 255), true},
		{hookName, strings.Repeat("h", 256), false},
		{clusterName, "a" + strings.Repeat("b", 99), true},
		{clusterName, "a" + strings.Repeat("b", 100), false},
		{clusterName, "-a", false},
		{labelKey, "example.com/pool", true},
		{labelKey, "pool", true},
		{labelKey, strings.Repeat("p", 63), true},
		{labelKey, strings.Repeat("p", 64), false},
		{labelKey, "Example.com/pool", false},
		{labelKey, "example.com/-pool", false},
		{dnsLabel, "kube-system", true},
		{dnsLabel, strings.Repeat("n", 63), true},
		{dnsLabel, strings.Repeat("n", 64), false},
		{dnsLabel, "Kube", false},
	} {
		if got := c.p.MatchString(c.s); got != c.want {
			t.Errorf("%v matching %d characters %.20q: %v, want %v", c.p, len(c.s), c.s, got, c.want)
		}
	}
}
