package preflight

import (
	"fmt"
	"strings"
)

// VersionLabel carries, on each admission policy, the Drainpipe version
// whose writes it admits (a test keeps deploy/admission-policy.yaml's
// equal to internal/version/VERSION).
const VersionLabel = "app.kubernetes.io/version"

// Policy is one of deploy/admission-policy.yaml's policies as found on a
// cluster.
type Policy struct {
	Version string // its VersionLabel
	// Bound: the binding of the same name names it and denies (a Warn or
	// Audit binding refuses nothing).
	Bound bool
}

// WantPolicies names deploy/admission-policy.yaml's policies; each is
// bound by a binding of its own name.
func WantPolicies() []string { return []string{"drainpipe-node-changes", "drainpipe-pod-changes"} }

// JudgeAdmission says whether each policy is applied (found holds it),
// bound and of version: the deployed function's, or, when that is not
// known, this command's (versionOf says which).
func JudgeAdmission(cluster string, found map[string]Policy, version, versionOf string) Check {
	c := Check{Cluster: cluster, What: "admission policies"}
	for _, name := range WantPolicies() {
		p, ok := found[name]
		if !ok {
			c.Missing = append(c.Missing, "ValidatingAdmissionPolicy "+name+" not applied")
			continue
		}
		if !p.Bound {
			c.Missing = append(c.Missing, "ValidatingAdmissionPolicy "+name+" not bound (a binding of its name with validationActions Deny)")
		}
		if version != "" && p.Version != version {
			c.Missing = append(c.Missing, fmt.Sprintf("ValidatingAdmissionPolicy %s of version %q, %s is %s", name, p.Version, versionOf, version))
		}
	}
	names := strings.Join(WantPolicies(), ", ")
	if len(c.Missing) == 0 {
		c.Status, c.Detail = OK, fmt.Sprintf("ValidatingAdmissionPolicies %s applied, bound and of %s's version %s", names, versionOf, version)
		return c
	}
	c.Status = Gap
	c.Detail = "not as deploy/admission-policy.yaml has it: " + strings.Join(c.Missing, "; ") +
		": kubectl apply -f deploy/admission-policy.yaml (without it group drainpipe may patch any field of any node or pod)"
	return c
}
