package event

import (
	"strings"
	"testing"

	"github.com/drainpipe/drainpipe/test/regexcost"
)

// The package's patterns compile when a cold start loads it, before the
// first record: a counted repetition such as {1,255} expands to hundreds of
// instructions (1.4 ms and thousands of allocations on the function's CPU
// share, in every environment of a wave). Lengths are checked apart.
func TestPatternsAreSmall(t *testing.T) {
	regexcost.Check(t, map[string]string{
		"instance": instanceIDPattern.String(), "account": accountPattern.String(), "region": regionPattern.String(),
		"hook": hookPattern.re.String(), "token": tokenPattern.String(), "event id": eventIDPattern.re.String(),
		"reservation": reservationIDPattern.String(),
	})
}

func TestBoundedPatterns(t *testing.T) {
	for _, c := range []struct {
		p    pattern
		s    string
		want bool
	}{
		{hookPattern, strings.Repeat("h", 255), true},
		{hookPattern, strings.Repeat("h", 256), false},
		{hookPattern, "", false},
		{hookPattern, "my-hook/x_1", true},
		{hookPattern, "my hook", false},
		{eventIDPattern, "a" + strings.Repeat("1", 127), true},
		{eventIDPattern, "a" + strings.Repeat("1", 128), false},
		{eventIDPattern, "-a", false},
		{eventIDPattern, "121345678-1234-1234-1234-123456789012", true},
	} {
		if got := c.p.MatchString(c.s); got != c.want {
			t.Errorf("%s matching %d characters %.20q: %v, want %v", c.p.re, len(c.s), c.s, got, c.want)
		}
	}
}
