package stack

import (
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
)

// rule is one cdk-nag suppression: the rule id, why the finding does not
// apply, and optionally the finding it covers (a regular expression unless
// it is a plain literal without metacharacters).
type rule struct{ id, reason, appliesTo string }

// suppress records cdk-nag suppressions on every CloudFormation resource
// under c, in the metadata format cdk-nag reads. Writing the metadata
// directly keeps cdk-nag out of the app's own dependencies: the tests and
// `-c nag=true` run the checks. Call it once per construct: metadata keys
// are overwritten, not merged.
func suppress(c constructs.IConstruct, rules ...rule) {
	var list []any
	for _, r := range rules {
		entry := map[string]any{"id": r.id, "reason": r.reason}
		if r.appliesTo != "" {
			var a any = r.appliesTo
			if strings.ContainsAny(r.appliesTo, `\.^$+?()[]{}|`) {
				a = map[string]any{"regex": "/^" + r.appliesTo + "$/"}
			}
			entry["applies_to"] = []any{a}
		}
		list = append(list, entry)
	}
	for _, child := range *c.Node().FindAll(constructs.ConstructOrder_PREORDER) {
		if res, ok := child.(awscdk.CfnResource); ok {
			res.AddMetadata(strPtr("cdk_nag"), map[string]any{"rules_to_suppress": list})
		}
	}
}

func strPtr(s string) *string { return &s }
