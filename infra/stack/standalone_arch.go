package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// lambdaArchitectures are the architectures `make release` builds a zip
// for, as Lambda names them (drainpipe-VERSION-linux-ARCH.zip).
var lambdaArchitectures = []string{"arm64", "x86_64"}

// architectureParam lets a standalone stack run either release zip: the
// function's architecture must be that of the bootstrap in the zip
// CodeKey names. arm64 (Graviton) is the default and what `make build`
// writes; x86_64 is for accounts that run only x86 functions, and for
// `sam local invoke` on an x86 host without QEMU.
func architectureParam(s awscdk.Stack, c *Construct) {
	arch := awscdk.NewCfnParameter(s, jsii.String("Architecture"), &awscdk.CfnParameterProps{
		Type: jsii.String("String"), Default: jsii.String(lambdaArchitectures[0]),
		AllowedValues: jsii.Strings(lambdaArchitectures...),
		Description: jsii.String("The function's architecture, that of the zip CodeKey names: arm64 for drainpipe-VERSION-linux-arm64.zip " +
			"(and make build's drainpipe.zip), x86_64 for drainpipe-VERSION-linux-x86_64.zip"),
	})
	cfn := c.Function.Node().DefaultChild().(awslambda.CfnFunction)
	cfn.AddPropertyOverride(jsii.String("Architectures"), []any{arch.ValueAsString()})
}
