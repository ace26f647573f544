package stack

import (
	"errors"
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// NewStandalone adds the stack as a template that needs no CDK bootstrap:
// no BootstrapVersion parameter, no asset bucket; the function's zip comes
// from the CodeBucket and CodeKey parameters. It deploys with `aws
// cloudformation deploy`, as a StackSet, from Terraform's
// aws_cloudformation_stack, and with `sam local invoke -t`. Its resources
// are New's, from the same code.
func NewStandalone(scope constructs.Construct, id string, props Props) (awscdk.Stack, error) {
	s := awscdk.NewStack(scope, jsii.String(id), &awscdk.StackProps{
		Description: jsii.String("Drainpipe: drains EKS nodes before EC2 takes their instances away (standalone template)"),
		// Fails synth if anything needed an asset: nothing may.
		Synthesizer: awscdk.NewBootstraplessSynthesizer(nil),
	})
	bucket := awscdk.NewCfnParameter(s, jsii.String("CodeBucket"), &awscdk.CfnParameterProps{
		Type: jsii.String("String"), Description: jsii.String("S3 bucket holding drainpipe.zip (in this stack's region)"),
		AllowedPattern: jsii.String(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`),
	})
	key := awscdk.NewCfnParameter(s, jsii.String("CodeKey"), &awscdk.CfnParameterProps{
		Type: jsii.String("String"), Description: jsii.String("S3 key of the function's zip, for the Architecture parameter: a release's " +
			"drainpipe-VERSION-linux-arm64.zip or -x86_64.zip, or drainpipe.zip (arm64) that `make build` writes to dist/"),
		Default: jsii.String("drainpipe.zip"), MinLength: jsii.Number(1),
	})
	props.Code = awslambda.Code_FromBucket(awss3.Bucket_FromBucketName(s, jsii.String("CodeBucketRef"), bucket.ValueAsString()), key.ValueAsString(), nil)
	// The key names one release's zip: a new release is a new key.
	awscdk.Annotations_Of(s).AcknowledgeWarning(jsii.String("@aws-cdk/aws-lambda:codeFromBucketObjectVersionNotSpecified"), jsii.String("CodeKey names one release"))
	props.StackNamedQueue = true
	err := props.Validate()
	if m := props.MaxClusters; m != 0 && (m < len(props.Clusters) || m > MaxTemplateClusters) {
		err = errors.Join(err, fmt.Errorf("maxClusters: %d, want 0 (exactly the clusters given) or %d to %d (at least as many as clusters)",
			m, max(1, len(props.Clusters)), MaxTemplateClusters))
	}
	if err != nil {
		return nil, fmt.Errorf("validating props: %w", err)
	}
	// The values just validated become the parameters' defaults.
	props, finish := templateParams(s, props)
	c, err := build(s, props)
	if err != nil {
		return nil, err
	}
	finish(c)
	valueParams(s, c, props)
	architectureParam(s, c)
	c.Function.Node().DefaultChild().(awslambda.CfnFunction).OverrideLogicalId(jsii.String(FunctionLogicalID))
	return s, nil
}
