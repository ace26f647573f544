package stack

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseks"
	"github.com/aws/jsii-runtime-go"
)

// MaxTemplateClusters bounds Props.MaxClusters: EKS's default quota of
// clusters per region.
const MaxTemplateClusters = 100

// clusterRefs returns a reference per cluster position of the Clusters
// parameter. Without max (0) there are n positions, each an element the
// parameter must have. With max, there are max positions and the parameter
// takes 1 to max names: the list is padded with empty names so every
// position can be selected, and held[k] is the condition that position k
// names a cluster (nil for the first, which always does). A position
// without a name stands for the first cluster, so that the function's IAM
// statement repeats an ARN rather than naming an empty cluster; its access
// entry is left out by its condition (holdAccessEntries).
func clusterRefs(s awscdk.Stack, clusters awscdk.CfnParameter, n, max int) (refs []string, held []heldCluster) {
	if max == 0 {
		for i := range n {
			refs = append(refs, *awscdk.Fn_Select(jsii.Number(float64(i)), clusters.ValueAsList()))
		}
		return refs, nil
	}
	padded := awscdk.Fn_Split(jsii.String(","), awscdk.Fn_Join(jsii.String(""), &[]*string{
		awscdk.Fn_Join(jsii.String(","), clusters.ValueAsList()), jsii.String(strings.Repeat(",", max)),
	}), nil)
	first := awscdk.Fn_Select(jsii.Number(0), padded)
	refs, held = []string{*first}, []heldCluster{{}}
	for k := 1; k < max; k++ {
		name := awscdk.Fn_Select(jsii.Number(float64(k)), padded)
		cond := awscdk.NewCfnCondition(s, jsii.String(fmt.Sprintf("Cluster%dGiven", k+1)), &awscdk.CfnConditionProps{
			Expression: awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(name, jsii.String(""))),
		})
		refs = append(refs, *awscdk.Token_AsString(awscdk.Fn_ConditionIf(cond.LogicalId(), name, first), nil))
		held = append(held, heldCluster{name, cond})
	}
	return refs, held
}

// heldCluster is a cluster position after the first: its name (empty when
// none is given) and the condition that one is.
type heldCluster struct {
	name *string
	cond awscdk.CfnCondition
}

// holdAccessEntries makes each position's access entry (newAccess names
// it AccessEntryK) exist only when the position names a cluster, and name
// the position's own cluster (not the first's, which stands in for a
// missing one elsewhere).
func holdAccessEntries(s awscdk.Stack, held []heldCluster) {
	for k, h := range held {
		if h.cond == nil {
			continue
		}
		if e, ok := s.Node().TryFindChild(jsii.String(fmt.Sprintf("AccessEntry%d", k))).(awseks.CfnAccessEntry); ok {
			e.CfnOptions().SetCondition(h.cond)
			e.SetClusterName(h.name)
		}
	}
}
