package stack

import (
	"fmt"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseks"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// newAccess gives the function's role Kubernetes group `drainpipe` on each
// cluster through an EKS access entry (clusters in API or API_AND_CONFIG_MAP
// mode), and optionally creates the role Auto Scaling needs to notify the
// queue directly, which it returns (nil when not asked for).
func newAccess(s constructs.Construct, p Props, role awsiam.Role, queue awssqs.Queue) awsiam.IRole {
	for i, c := range p.Clusters {
		if slices.Contains(p.AWSAuthClusters, c) {
			continue // mapped in aws-auth by hand; see the README
		}
		id := "AccessEntry-" + c
		if *awscdk.Token_IsUnresolved(c) { // a template parameter's element
			id = fmt.Sprintf("AccessEntry%d", i)
		}
		awseks.NewCfnAccessEntry(s, jsii.String(id), &awseks.CfnAccessEntryProps{
			ClusterName:      jsii.String(c),
			PrincipalArn:     role.RoleArn(),
			Type:             jsii.String("STANDARD"),
			KubernetesGroups: jsii.Strings(accessGroup),
		})
	}
	if !p.ASGNotificationRole {
		return nil
	}
	notify := awsiam.NewRole(s, jsii.String("LifecycleNotificationRole"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("autoscaling.amazonaws.com"), nil),
		Description: jsii.String("Lets Auto Scaling lifecycle hooks send their notifications to the Drainpipe queue"),
	})
	// The same two actions the AWS-managed AutoScalingNotificationAccessRole
	// grants for SQS, on this queue only.
	notify.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("sqs:SendMessage", "sqs:GetQueueUrl"),
		Resources: &[]*string{queue.QueueArn()},
	}))
	awscdk.NewCfnOutput(s, jsii.String("LifecycleNotificationRoleArn"), &awscdk.CfnOutputProps{
		Value:       notify.RoleArn(),
		Description: jsii.String("RoleARN for lifecycle hooks whose NotificationTargetARN is the queue"),
	})
	return notify
}
