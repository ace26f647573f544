package config

import (
	"fmt"
	"regexp"
)

// secretARN matches a Secrets Manager secret or an SSM parameter ARN. The
// webhook URL is a credential, so only a reference to it is configured.
var secretARN = regexp.MustCompile(`^arn:aws[a-z-]*:(secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]+|ssm:[a-z0-9-]+:[0-9]{12}:parameter/[A-Za-z0-9/_.-]+)$`)

func parseSecretARN(v string) (string, error) {
	if !secretARN.MatchString(v) {
		return "", fmt.Errorf("%q is not the ARN of a Secrets Manager secret or an SSM parameter", v)
	}
	return v, nil
}
