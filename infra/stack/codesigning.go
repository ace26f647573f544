package stack

import (
	"regexp"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// codeSigningConfigARN is a Lambda code signing configuration's ARN.
var codeSigningConfigARN = regexp.MustCompile(`^arn:aws[a-z-]*:lambda:[a-z0-9-]+:[0-9]{12}:code-signing-config:csc-[0-9a-z]{17}$`)

// setCodeSigning sets Props.CodeSigningConfigARN on the function. Lambda
// then takes only a zip signed by one of the configuration's signing
// profiles (AWS Signer), and refuses or warns of any other as its policy
// says: CDK's own asset zip is unsigned, so a signed release is deployed
// from the standalone template's CodeBucket and CodeKey (docs/deploy.md).
func setCodeSigning(c *Construct) {
	if c.Props.CodeSigningConfigARN == "" {
		return
	}
	c.Function.Node().DefaultChild().(awslambda.CfnFunction).SetCodeSigningConfigArn(jsii.String(c.Props.CodeSigningConfigARN))
}

// validateCodeSigning checks Props.CodeSigningConfigARN.
func (p Props) validateCodeSigning(bad func(format string, args ...any)) {
	if p.CodeSigningConfigARN != "" && !codeSigningConfigARN.MatchString(p.CodeSigningConfigARN) {
		bad("codeSigningConfigArn: %q is not a Lambda code signing configuration ARN (arn:…:lambda:REGION:ACCOUNT:code-signing-config:csc-…)", p.CodeSigningConfigARN)
	}
}
