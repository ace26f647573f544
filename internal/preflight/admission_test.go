package preflight

import (
	"strings"
	"testing"
)

func TestJudgeAdmission(t *testing.T) {
	both := func(p Policy) map[string]Policy {
		return map[string]Policy{"drainpipe-node-changes": p, "drainpipe-pod-changes": p}
	}
	for _, tt := range []struct {
		name    string
		found   map[string]Policy
		version string
		status  Status
		missing []string
	}{
		{"in place", both(Policy{Version: "1.2.0", Bound: true}), "1.2.0", OK, nil},
		{"not applied", nil, "1.2.0", Gap, []string{"drainpipe-node-changes not applied", "drainpipe-pod-changes not applied"}},
		{"not bound", both(Policy{Version: "1.2.0"}), "1.2.0", Gap, []string{"drainpipe-node-changes not bound", "drainpipe-pod-changes not bound"}},
		{"another version", map[string]Policy{"drainpipe-node-changes": {Version: "1.1.0", Bound: true}, "drainpipe-pod-changes": {Version: "1.2.0", Bound: true}},
			"1.2.0", Gap, []string{`drainpipe-node-changes of version "1.1.0", the function is 1.2.0`}},
		{"version unknown", both(Policy{Version: "1.1.0", Bound: true}), "", OK, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := JudgeAdmission("prod", tt.found, tt.version, "the function")
			if c.Status != tt.status || len(c.Missing) != len(tt.missing) {
				t.Fatalf("JudgeAdmission = %+v, want %s with %d missing", c, tt.status, len(tt.missing))
			}
			for i, m := range tt.missing {
				if !strings.Contains(c.Missing[i], m) {
					t.Errorf("missing[%d] = %q, want it to contain %q", i, c.Missing[i], m)
				}
			}
		})
	}
}
