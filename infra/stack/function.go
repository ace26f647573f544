package stack

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3assets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// FunctionLogicalID is the function's fixed logical ID, so that
// `sam local invoke -t cdk.out/<Stack>.template.json Function` is stable.
const FunctionLogicalID = "Function"

// newFunction creates the handler, its log group, its role and its SQS
// event source. The role gets no managed policies: every permission is
// written out here, scoped to the configured resources.
func newFunction(s constructs.Construct, p Props, queue awssqs.Queue) (awslambda.Function, awsiam.Role) {
	logs := awslogs.NewLogGroup(s, jsii.String("FunctionLogs"), &awslogs.LogGroupProps{
		Retention: retentionDays(p.LogRetention),
	})
	role := awsiam.NewRole(s, jsii.String("FunctionRole"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String("Drainpipe handler: reads the queue, looks up instances, completes lifecycle actions, drains nodes"),
	})
	logs.GrantWrite(role)
	grantHandler(s, p, role)

	env := map[string]*string{}
	for k, v := range p.environment() {
		env[k] = jsii.String(v)
	}
	fn := awslambda.NewFunction(s, jsii.String("Function"), &awslambda.FunctionProps{
		Description:   jsii.String("Drainpipe: drains EKS nodes before their instances go"),
		Runtime:       awslambda.Runtime_PROVIDED_AL2023(),
		Architecture:  awslambda.Architecture_ARM_64(),
		Handler:       jsii.String("bootstrap"),
		Code:          p.code(),
		MemorySize:    jsii.Number(float64(p.MemoryMB)),
		Timeout:       awscdk.Duration_Seconds(jsii.Number(p.Timeout.Seconds())),
		Role:          role,
		LogGroup:      logs,
		LoggingFormat: awslambda.LoggingFormat_JSON,
		Environment:   &env,
		// A spot wave must not be throttled by other functions.
		ReservedConcurrentExecutions: p.reserved(),
	})
	placeInVPC(fn, role, p)

	var window awscdk.Duration
	if p.BatchWindow > 0 {
		window = awscdk.Duration_Seconds(jsii.Number(p.BatchWindow.Seconds()))
	}
	// Grants the role the SQS consume actions on this queue only.
	fn.AddEventSource(awslambdaeventsources.NewSqsEventSource(queue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(float64(p.BatchSize)),
		MaxBatchingWindow:       window,
		MaxConcurrency:          jsii.Number(float64(p.MaxConcurrency)),
		ReportBatchItemFailures: jsii.Bool(true),
	}))
	suppress(role,
		rule{"AwsSolutions-IAM5", "ec2:DescribeInstances, ec2:DescribeInstanceStatus and autoscaling:DescribeLifecycleHooks support no resource-level permissions, so their resource must be '*' (the actions themselves are exact and read-only).", "Resource::*"},
		rule{"AwsSolutions-IAM5", "A Lambda log group's streams are created at run time; the grant is limited to this function's own log group.", "Resource::<FunctionLogs.*\\.Arn>:\\*"},
		rule{"AwsSolutions-IAM5", "An Auto Scaling group's ARN contains a generated id unknown at deploy time; the group name (or the configured prefix) is fixed.", "Resource::arn:<AWS::Partition>:autoscaling:<AWS::Region>:<AWS::AccountId>:autoScalingGroup:\\*:autoScalingGroupName/.*"},
	)
	return fn, role
}

// grantHandler adds the AWS API permissions the handler itself uses.
func grantHandler(s constructs.Construct, p Props, role awsiam.Role) {
	describe := jsii.Strings("ec2:DescribeInstances")
	if p.SweepInterval > 0 {
		// The sweep finds scheduled events no Health notice brought.
		describe = jsii.Strings("ec2:DescribeInstances", "ec2:DescribeInstanceStatus")
	}
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("DescribeInstances"),
		Actions:   describe,
		Resources: jsii.Strings("*"),
		// The resource cannot be narrowed; the region can.
		Conditions: &map[string]any{"StringEquals": map[string]any{"aws:RequestedRegion": awscdk.Stack_Of(s).Region()}},
	}))
	var clusters []*string
	for _, c := range p.Clusters {
		clusters = append(clusters, awscdk.Stack_Of(s).FormatArn(&awscdk.ArnComponents{Service: jsii.String("eks"), Resource: jsii.String("cluster"), ResourceName: jsii.String(c)}))
	}
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("DescribeClusters"),
		Actions:   jsii.Strings("eks:DescribeCluster"),
		Resources: &clusters,
	}))
	if p.WebhookSecretARN != "" {
		role.AddToPrincipalPolicy(webhookSecretStatement(p.WebhookSecretARN))
	}
	if p.WebhookKMSKeyARN != "" {
		role.AddToPrincipalPolicy(webhookKeyStatement(p.WebhookSecretARN, p.WebhookKMSKeyARN))
	}
	if groups := groupARNs(s, p); len(groups) > 0 {
		role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("LifecycleActions"),
			Actions:   jsii.Strings("autoscaling:CompleteLifecycleAction", "autoscaling:RecordLifecycleActionHeartbeat"),
			Resources: &groups,
		}))
		role.AddToPrincipalPolicy(describeHooksStatement())
	}
}

// webhookSecretStatement lets the function read the webhook secret and
// nothing else. IAM compares a secret's full ARN, which ends in a random
// "-XXXXXX"; whether the configured ARN has it cannot be told from its
// form ("my-secret" ends like a suffix), so the ARN with "-??????"
// appended is allowed too.
func webhookSecretStatement(arn string) awsiam.PolicyStatement {
	if strings.Contains(arn, ":ssm:") {
		return awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid: jsii.String("WebhookParameter"), Actions: jsii.Strings("ssm:GetParameter"), Resources: jsii.Strings(arn),
		})
	}
	return awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String("WebhookSecret"), Actions: jsii.Strings("secretsmanager:GetSecretValue"),
		Resources: jsii.Strings(arn, arn+"-??????"),
	})
}

// groupARNs returns the ARNs of the configured Auto Scaling groups. The
// group-id segment is unknown at deploy time, hence its '*'.
func groupARNs(s constructs.Construct, p Props) []*string {
	names := slices.Clone(p.ASGNames)
	if p.ASGNamePrefix != "" {
		names = append(names, p.ASGNamePrefix+"*")
	}
	var arns []*string
	for _, n := range names {
		arns = append(arns, awscdk.Stack_Of(s).FormatArn(&awscdk.ArnComponents{
			Service:      jsii.String("autoscaling"),
			Resource:     jsii.String("autoScalingGroup"),
			ResourceName: jsii.String(fmt.Sprintf("*:autoScalingGroupName/%s", n)),
			ArnFormat:    awscdk.ArnFormat_COLON_RESOURCE_NAME,
		}))
	}
	return arns
}

// retentionDays maps a validated day count to the CDK enum.
func retentionDays(days int) awslogs.RetentionDays {
	m := map[int]awslogs.RetentionDays{
		1: awslogs.RetentionDays_ONE_DAY, 3: awslogs.RetentionDays_THREE_DAYS, 5: awslogs.RetentionDays_FIVE_DAYS,
		7: awslogs.RetentionDays_ONE_WEEK, 14: awslogs.RetentionDays_TWO_WEEKS, 30: awslogs.RetentionDays_ONE_MONTH,
		60: awslogs.RetentionDays_TWO_MONTHS, 90: awslogs.RetentionDays_THREE_MONTHS, 120: awslogs.RetentionDays_FOUR_MONTHS,
		150: awslogs.RetentionDays_FIVE_MONTHS, 180: awslogs.RetentionDays_SIX_MONTHS, 365: awslogs.RetentionDays_ONE_YEAR,
		400: awslogs.RetentionDays_THIRTEEN_MONTHS, 545: awslogs.RetentionDays_EIGHTEEN_MONTHS, 731: awslogs.RetentionDays_TWO_YEARS,
		1096: awslogs.RetentionDays_THREE_YEARS, 1827: awslogs.RetentionDays_FIVE_YEARS, 2192: awslogs.RetentionDays_SIX_YEARS,
		2557: awslogs.RetentionDays_SEVEN_YEARS, 2922: awslogs.RetentionDays_EIGHT_YEARS, 3288: awslogs.RetentionDays_NINE_YEARS,
		3653: awslogs.RetentionDays_TEN_YEARS,
	}
	return m[days]
}

// code is Props.Code, or the bootstrap built into AssetDir.
func (p Props) code() awslambda.Code {
	if p.Code != nil {
		return p.Code
	}
	// Only the bootstrap goes in the zip; dist/ also holds other builds.
	return awslambda.Code_FromAsset(jsii.String(p.AssetDir), &awss3assets.AssetOptions{
		Exclude: jsii.Strings("*", "!bootstrap"),
	})
}
