package stack

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// templateParams turns the settings operators change most into the
// standalone template's parameters, defaulting to the values it was
// synthesized with (validated by then): one template serves accounts whose
// clusters, served group prefix and hooks, actions and dry run differ. It
// returns props with CloudFormation references in place of those values,
// and a function to call on the built construct. What a parameter cannot change: the
// number of clusters beyond p.MaxClusters (one access entry each; without
// it, exactly as many as p.Clusters) and whether groups are served at all
// (the lifecycle rules exist or not).
func templateParams(s awscdk.Stack, p Props) (Props, func(*Construct)) {
	param := func(id, typ, def, desc string, allowed ...string) awscdk.CfnParameter {
		props := &awscdk.CfnParameterProps{Type: jsii.String(typ), Default: jsii.String(def), Description: jsii.String(desc)}
		if len(allowed) > 0 {
			props.AllowedValues = jsii.Strings(allowed...)
		}
		return awscdk.NewCfnParameter(s, jsii.String(id), props)
	}
	desc := fmt.Sprintf("The EKS clusters whose nodes Drainpipe drains: exactly %d name(s), comma-separated (the template has one access entry per cluster)", len(p.Clusters))
	if p.MaxClusters > 0 {
		desc = fmt.Sprintf("The EKS clusters whose nodes Drainpipe drains: 1 to %d name(s), comma-separated (the template has an access entry for each of the first %d)", p.MaxClusters, p.MaxClusters)
	}
	clusters := param("Clusters", "CommaDelimitedList", strings.Join(p.Clusters, ","), desc)
	// One reference per position, the same string for a name wherever it
	// appears (awsAuthClusters are a subset of clusters).
	names, held := clusterRefs(s, clusters, len(p.Clusters), p.MaxClusters)
	var awsAuth []string
	for _, c := range p.AWSAuthClusters {
		awsAuth = append(awsAuth, names[slices.Index(p.Clusters, c)])
	}
	p.Clusters, p.AWSAuthClusters = names, awsAuth
	if p.ASGNamePrefix != "" {
		prefix := param("AsgNamePrefix", "String", p.ASGNamePrefix,
			"Auto Scaling groups whose lifecycle actions are handled, by name prefix (1-255 characters, no * ? : \")")
		// A '*' or '?' would widen the IAM resource; empty would match every group.
		prefix.SetAllowedPattern(jsii.String(`^[^*?:"\x00-\x1f]{1,255}$`))
		p.ASGNamePrefix = *prefix.ValueAsString()
	}
	var actions []struct{ env, ref string }
	for _, f := range p.Actions.fields() {
		id := strings.ToUpper(f.key[:1]) + f.key[1:] // actionSpot: ActionSpot
		v := param(id, "String", f.value, fmt.Sprintf("%s (empty: the function's default)", f.env), append([]string{""}, actionNames...)...)
		actions = append(actions, struct{ env, ref string }{f.env, *v.ValueAsString()})
	}
	dryRun := param("DryRun", "String", strconv.FormatBool(p.DryRun), "true: the function logs what it would do and changes nothing", "true", "false")
	var hooks awscdk.CfnParameter
	if len(p.LifecycleHookNames) > 0 && (len(p.ASGNames) > 0 || p.ASGNamePrefix != "") {
		hooks = param("LifecycleHookNames", "CommaDelimitedList", strings.Join(p.LifecycleHookNames, ","),
			"The lifecycle hooks of the served groups Drainpipe owns (others are left to their owners), comma-separated")
		hooks.SetAllowedPattern(jsii.String(hookName.String())) // each element
	}
	return p, func(c *Construct) {
		cfn := c.Function.Node().DefaultChild().(awslambda.CfnFunction)
		cfn.AddPropertyOverride(jsii.String("Environment.Variables.DRAINPIPE_DRY_RUN"), dryRun.ValueAsString())
		if held != nil {
			// The names given, not the padded positions.
			cfn.AddPropertyOverride(jsii.String("Environment.Variables.DRAINPIPE_CLUSTERS"), awscdk.Fn_Join(jsii.String(","), clusters.ValueAsList()))
			holdAccessEntries(s, held)
		}
		for _, a := range actions {
			cfn.AddPropertyOverride(jsii.String("Environment.Variables."+a.env), a.ref)
		}
		if hooks == nil {
			return
		}
		cfn.AddPropertyOverride(jsii.String("Environment.Variables.DRAINPIPE_LIFECYCLE_HOOK_NAMES"), awscdk.Fn_Join(jsii.String(","), hooks.ValueAsList()))
		for _, r := range c.Rules {
			if servedGroupsRule(*r.Node().Id()) {
				r.Node().DefaultChild().(awsevents.CfnRule).AddPropertyOverride(jsii.String("EventPattern.detail.LifecycleHookName"), hooks.ValueAsList())
			}
		}
	}
}
