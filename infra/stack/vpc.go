package stack

import (
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// placeInVPC attaches the function to the configured subnets and security
// groups by id, set on the CloudFormation resource so synth needs no VPC
// lookup (it stays offline). Lambda creates the network interfaces with
// the function's role, which gets the actions of the AWS-managed
// AWSLambdaVPCAccessExecutionRole written out (they take no resource).
func placeInVPC(fn awslambda.Function, role awsiam.Role, p Props) {
	if len(p.SubnetIDs) == 0 {
		return
	}
	fn.Node().DefaultChild().(awslambda.CfnFunction).SetVpcConfig(&awslambda.CfnFunction_VpcConfigProperty{
		SubnetIds:        jsii.Strings(p.SubnetIDs...),
		SecurityGroupIds: jsii.Strings(p.SecurityGroupIDs...),
	})
	eni := jsii.Strings("ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets",
		"ec2:DeleteNetworkInterface", "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses")
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String("VPCNetworkInterfaces"), Actions: eni, Resources: jsii.Strings("*"),
	}))
	// The function's own code never needs them: Lambda calls EC2 for its
	// ENIs without lambda:SourceFunctionArn, while every call made with
	// the role's credentials from the execution environment carries it. A
	// Null test rather than the function's ARN: naming the function in its
	// own role's policy would be a dependency cycle.
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String("VPCNetworkInterfacesNotFromCode"), Effect: awsiam.Effect_DENY, Actions: eni, Resources: jsii.Strings("*"),
		Conditions: &map[string]any{"Null": map[string]any{"lambda:SourceFunctionArn": "false"}},
	}))
}

// webhookKeyStatement lets the function decrypt with the webhook secret's
// customer managed key, and only through the service holding the secret.
func webhookKeyStatement(secretARN, keyARN string) awsiam.PolicyStatement {
	service := "secretsmanager"
	if strings.Contains(secretARN, ":ssm:") {
		service = "ssm"
	}
	return awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("WebhookKey"),
		Actions:    jsii.Strings("kms:Decrypt"),
		Resources:  jsii.Strings(keyARN),
		Conditions: &map[string]any{"StringEquals": map[string]any{"kms:ViaService": service + "." + arnRegion(secretARN) + ".amazonaws.com"}},
	})
}
