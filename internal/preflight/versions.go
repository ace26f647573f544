package preflight

import (
	"fmt"
	"slices"
	"strings"
)

// Object is one object a manifest of deploy/ installs on a cluster.
type Object struct {
	Manifest  string // deploy/rbac.yaml
	Kind      string
	Namespace string // empty for a cluster-scoped object
	Name      string
}

func (o Object) String() string {
	s := o.Kind + " " + o.Name
	if o.Namespace != "" {
		s += " in " + o.Namespace
	}
	return s + " (" + o.Manifest + ")"
}

// VersionedObjects are the objects of deploy/ whose VersionLabel `drainpipe
// check` compares with the function's version in its versions finding: all
// but the admission policies, whose version the admission policies finding
// judges (a test keeps the two lists equal to the manifests).
func VersionedObjects() []Object {
	const rbac, flow, admission = "deploy/rbac.yaml", "deploy/flowcontrol.yaml", "deploy/admission-policy.yaml"
	return []Object{
		{rbac, "ClusterRole", "", "drainpipe"},
		{rbac, "ClusterRoleBinding", "", "drainpipe"},
		{rbac, "Namespace", "", LeaseNamespace},
		{rbac, "Role", LeaseNamespace, "drainpipe-drain-slots"},
		{rbac, "RoleBinding", LeaseNamespace, "drainpipe-drain-slots"},
		{flow, "PriorityLevelConfiguration", "", "drainpipe"},
		{flow, "PriorityLevelConfiguration", "", "drainpipe-nodes"},
		{flow, "FlowSchema", "", "drainpipe-nodes"},
		{flow, "FlowSchema", "", "drainpipe"},
		{admission, "ValidatingAdmissionPolicyBinding", "", "drainpipe-node-changes"},
		{admission, "ValidatingAdmissionPolicyBinding", "", "drainpipe-pod-changes"},
	}
}

// JudgeVersions says whether every object of VersionedObjects found on the
// cluster (found maps it to its VersionLabel, "" when it has none) is of
// version: the deployed function's, or, when that is not known, this
// command's (versionOf says which). An object not found is left to the
// rbac, flowcontrol and admission policies findings, which say what lacks.
func JudgeVersions(cluster string, found map[Object]string, version, versionOf string) Check {
	c := Check{Cluster: cluster, What: "versions"}
	manifests := map[string]bool{}
	n := 0
	for _, o := range VersionedObjects() {
		got, ok := found[o]
		if !ok {
			continue
		}
		n++
		if version == "" || got == version {
			continue
		}
		manifests[o.Manifest] = true
		if got == "" {
			got = "none"
		} else {
			got = fmt.Sprintf("%q", got)
		}
		c.Missing = append(c.Missing, fmt.Sprintf("%s of version %s, %s is %s", o, got, versionOf, version))
	}
	if len(c.Missing) == 0 {
		c.Status = OK
		switch {
		case n == 0:
			c.Detail = "no object of deploy/ found to compare (see the other findings)"
		case version == "":
			c.Detail = fmt.Sprintf("%d object(s) of deploy/ found; the version to compare with is not known", n)
		default:
			c.Detail = fmt.Sprintf("the %d object(s) of deploy/ found are of %s's version %s", n, versionOf, version)
		}
		return c
	}
	var apply []string
	for _, o := range VersionedObjects() {
		if manifests[o.Manifest] && !slices.Contains(apply, o.Manifest) {
			apply = append(apply, o.Manifest)
		}
	}
	c.Status = Gap
	c.Detail = "manifests of another release than " + versionOf + "'s: " + strings.Join(c.Missing, "; ") +
		": kubectl apply -f " + strings.Join(apply, " -f ") + " of release " + version
	return c
}
