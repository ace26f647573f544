package e2e

import (
	"strings"

	"github.com/drainpipe/drainpipe/test/lambdart"
)

// logsContain reports whether any line contains all of subs.
func logsContain(rt *lambdart.Runtime, subs ...string) bool {
	for _, l := range rt.Logs() {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(l, s)
		}
		if all {
			return true
		}
	}
	return false
}
