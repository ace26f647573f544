package preflight

import (
	"fmt"
	"slices"
	"strings"
)

// Permission is one thing group drainpipe must be allowed to do, as a
// SubjectAccessReview asks it.
type Permission struct {
	Verb        string `json:"verb"`
	APIGroup    string `json:"apiGroup,omitempty"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
}

func (p Permission) String() string {
	r := p.Resource
	if p.APIGroup != "" {
		r += "." + p.APIGroup
	}
	if p.Subresource != "" {
		r += "/" + p.Subresource
	}
	if p.Namespace != "" {
		r += " in " + p.Namespace
	}
	return p.Verb + " " + r
}

// LeaseNamespace is where the drain slots of group-aware drains live
// (DRAINPIPE_GROUP_NAMESPACE's default, deploy/rbac.yaml's Role).
const LeaseNamespace = "drainpipe"

// Permissions are what deploy/rbac.yaml grants, one per verb: a test
// keeps them equal to the manifest.
func Permissions() []Permission {
	var out []Permission
	add := func(group, resource, sub, ns string, verbs ...string) {
		for _, v := range verbs {
			out = append(out, Permission{Verb: v, APIGroup: group, Resource: resource, Subresource: sub, Namespace: ns})
		}
	}
	add("", "nodes", "", "", "get", "list", "patch")
	add("", "pods", "", "", "get", "list", "watch", "delete", "patch")
	add("", "pods", "eviction", "", "create")
	add("policy", "poddisruptionbudgets", "", "", "list")
	add("apps", "daemonsets", "", "", "get")
	add("", "events", "", "", "create", "patch")
	add("coordination.k8s.io", "leases", "", LeaseNamespace, "list", "create", "update", "delete")
	return out
}

// JudgeRBAC turns the answers of one access review per permission into
// the cluster's rbac finding. denied lists the permissions refused.
func JudgeRBAC(cluster string, denied []Permission) Check {
	c := Check{Cluster: cluster, What: "rbac"}
	if len(denied) == 0 {
		c.Status, c.Detail = OK, fmt.Sprintf("group %s may do all %d things deploy/rbac.yaml grants", Group, len(Permissions()))
		return c
	}
	c.Status, c.Missing = Gap, []string{}
	for _, p := range denied {
		c.Missing = append(c.Missing, p.String())
	}
	c.Detail = fmt.Sprintf("group %s may not %s: kubectl apply -f deploy/rbac.yaml", Group, strings.Join(c.Missing, ", "))
	return c
}

// FlowSchema is a FlowSchema as read from a cluster.
type FlowSchema struct {
	Name          string
	PriorityLevel string
	Groups        []string // the Group subjects of its rules
}

// WantFlowSchemas are deploy/flowcontrol.yaml's schemas, each with its
// priority level: a test keeps them equal to the manifest.
func WantFlowSchemas() map[string]string {
	return map[string]string{"drainpipe-nodes": "drainpipe-nodes", "drainpipe": "drainpipe"}
}

// JudgeFlowControl compares the schemas found (by name; absent ones
// missing) and the priority levels that exist with the manifest's.
func JudgeFlowControl(cluster string, schemas map[string]FlowSchema, levels []string) Check {
	c := Check{Cluster: cluster, What: "flowcontrol"}
	var missing, wrong []string
	names := make([]string, 0, len(WantFlowSchemas()))
	for name := range WantFlowSchemas() {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		level := WantFlowSchemas()[name]
		fs, ok := schemas[name]
		switch {
		case !ok:
			missing = append(missing, "FlowSchema "+name)
		case fs.PriorityLevel != level || !slices.Contains(fs.Groups, Group):
			wrong = append(wrong, fmt.Sprintf("FlowSchema %s (level %q, groups %v; want level %q, group %s)",
				name, fs.PriorityLevel, fs.Groups, level, Group))
		}
		if !slices.Contains(levels, level) && !slices.Contains(missing, "PriorityLevelConfiguration "+level) {
			missing = append(missing, "PriorityLevelConfiguration "+level)
		}
	}
	if len(missing)+len(wrong) == 0 {
		c.Status, c.Detail = OK, "FlowSchemas "+strings.Join(names, ", ")+" and their priority levels are in place"
		return c
	}
	c.Status, c.Missing = Gap, append(missing, wrong...)
	c.Detail = "not as deploy/flowcontrol.yaml has it: " + strings.Join(c.Missing, "; ") +
		": kubectl apply -f deploy/flowcontrol.yaml (without it a wave's requests share global-default and meet 429s)"
	return c
}

// AccessEntry is the function role's access entry on a cluster, as read.
type AccessEntry struct {
	Found  bool
	Groups []string
	// AuthMode is the cluster's authentication mode (API,
	// API_AND_CONFIG_MAP, CONFIG_MAP), when known.
	AuthMode string
}

// JudgeAccessEntry decides the access entry finding.
func JudgeAccessEntry(cluster, role string, e AccessEntry) Check {
	c := Check{Cluster: cluster, What: "access entry"}
	switch {
	case e.Found && slices.Contains(e.Groups, Group):
		c.Status, c.Detail = OK, role+" is mapped to group "+Group
	case e.Found:
		c.Status, c.Detail = Gap, fmt.Sprintf("%s has an access entry with groups %v, without %s: its requests are refused", role, e.Groups, Group)
		c.Missing = []string{"group " + Group}
	case e.AuthMode == "CONFIG_MAP" || e.AuthMode == "API_AND_CONFIG_MAP":
		c.Status, c.Detail = Unknown, "no access entry for "+role+", and the cluster also reads the aws-auth ConfigMap: "+
			"check that its mapRoles maps the role to group "+Group+" (awsAuthClusters), or deploy with the cluster out of awsAuthClusters"
	default:
		c.Status, c.Detail = Gap, "no access entry for "+role+": deploy the stack with this cluster in clusters, or map the role "+
			"in aws-auth if the cluster uses it (awsAuthClusters)"
		c.Missing = []string{"access entry"}
	}
	return c
}

// Subscription is one subscription of the alarm topic.
type Subscription struct {
	Protocol string
	Endpoint string
	// Pending is a subscription not yet confirmed (SubscriptionArn
	// "PendingConfirmation"): it delivers nothing.
	Pending bool
}

// JudgeTopic decides whether the alarm topic reaches anybody.
func JudgeTopic(topic string, subs []Subscription) Check {
	c := Check{What: "alarm topic"}
	var live, pending []string
	for _, s := range subs {
		if s.Pending {
			pending = append(pending, s.Protocol+":"+s.Endpoint)
		} else {
			live = append(live, s.Protocol)
		}
	}
	if len(live) > 0 {
		c.Status, c.Detail = OK, fmt.Sprintf("%s has %d confirmed subscription(s) (%s)", topic, len(live), strings.Join(live, ", "))
		return c
	}
	if len(pending) > 0 {
		c.Status, c.Detail = Gap, topic+" has only unconfirmed subscriptions ("+strings.Join(pending, ", ")+
			"): confirm the email AWS sent, or alarms reach nobody"
		return c
	}
	c.Status, c.Detail = Gap, topic+" has no subscriber: alarms reach nobody (deploy with -c alarmEmail=..., or "+
		"aws sns subscribe --topic-arn "+topic+")"
	return c
}
