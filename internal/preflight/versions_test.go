package preflight

import (
	"strings"
	"testing"
)

func TestJudgeVersions(t *testing.T) {
	all := func(v string) map[Object]string {
		m := map[Object]string{}
		for _, o := range VersionedObjects() {
			m[o] = v
		}
		return m
	}
	role, slots := VersionedObjects()[0], VersionedObjects()[3]
	schema := VersionedObjects()[7]
	mixed := all("1.2.0")
	mixed[role], mixed[slots], mixed[schema] = "1.1.0", "", "1.1.0"
	for _, tt := range []struct {
		name    string
		found   map[Object]string
		version string
		status  Status
		missing []string
		detail  string
	}{
		{"in place", all("1.2.0"), "1.2.0", OK, nil, "the 11 object(s) of deploy/ found are of the function's version 1.2.0"},
		{"nothing applied", nil, "1.2.0", OK, nil, "no object of deploy/ found"},
		{"version unknown", all("1.1.0"), "", OK, nil, "the version to compare with is not known"},
		{"another release", mixed, "1.2.0", Gap, []string{
			`ClusterRole drainpipe (deploy/rbac.yaml) of version "1.1.0", the function is 1.2.0`,
			`Role drainpipe-drain-slots in drainpipe (deploy/rbac.yaml) of version none, the function is 1.2.0`,
			`FlowSchema drainpipe-nodes (deploy/flowcontrol.yaml) of version "1.1.0", the function is 1.2.0`,
		}, "kubectl apply -f deploy/rbac.yaml -f deploy/flowcontrol.yaml of release 1.2.0"},
		{"only what was found", map[Object]string{role: "1.2.0"}, "1.2.0", OK, nil, "the 1 object(s)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := JudgeVersions("prod", tt.found, tt.version, "the function")
			if c.Status != tt.status || c.Cluster != "prod" || c.What != "versions" || !strings.Contains(c.Detail, tt.detail) {
				t.Errorf("JudgeVersions = %+v, want %s, detail with %q", c, tt.status, tt.detail)
			}
			if strings.Join(c.Missing, "\n") != strings.Join(tt.missing, "\n") {
				t.Errorf("missing =\n%s\nwant\n%s", strings.Join(c.Missing, "\n"), strings.Join(tt.missing, "\n"))
			}
		})
	}
}
