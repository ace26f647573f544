package stack

import (
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
)

// The function's reserves, as internal/config defaults them: the invocation
// stops acting DRAINPIPE_DEADLINE_RESERVE before its deadline, and each
// drain stops DRAINPIPE_HOOK_RESERVE before that to complete its hooks.
const (
	defaultDeadlineReserve = 10 * time.Second
	defaultHookReserve     = 5 * time.Second
)

// reserves returns the two reserves the function will use, from Env when
// set there; an unparsable value is reported by the function at start-up.
func (p Props) reserves() (deadline, hook time.Duration) {
	deadline, hook = defaultDeadlineReserve, defaultHookReserve
	if d, err := time.ParseDuration(p.Env["DRAINPIPE_DEADLINE_RESERVE"]); err == nil {
		deadline = d
	}
	if d, err := time.ParseDuration(p.Env["DRAINPIPE_HOOK_RESERVE"]); err == nil {
		hook = d
	}
	return deadline, hook
}

// checkReserves refuses a function timeout that leaves no time to act:
// every invocation would only retry its records until the dead-letter
// queue, and lifecycle hooks would wait out their timeouts.
func (p Props) checkReserves() error {
	deadline, hook := p.reserves()
	if p.Timeout > 0 && p.Timeout <= deadline+hook {
		return fmt.Errorf("timeoutSeconds: %vs leaves no time to act after DRAINPIPE_DEADLINE_RESERVE (%s) and "+
			"DRAINPIPE_HOOK_RESERVE (%s): set timeoutSeconds above %vs, or lower the reserves in env",
			p.Timeout.Seconds(), deadline, hook, (deadline + hook).Seconds())
	}
	return nil
}

// groupEnv tells the function which groups' lifecycle hooks it serves, so
// it leaves a forged or misrouted message for another group alone.
func (p Props) groupEnv(env map[string]string) {
	if len(p.ASGNames) > 0 {
		env["DRAINPIPE_ASG_NAMES"] = strings.Join(p.ASGNames, ",")
	}
	if p.ASGNamePrefix != "" {
		env["DRAINPIPE_ASG_NAME_PREFIX"] = p.ASGNamePrefix
	}
	p.hookNameEnv(env)
}

// describeHooksStatement lets the function read its hooks' heartbeat
// timeouts (the heartbeat cadence and global timeout follow from them).
// Auto Scaling's Describe actions support no resource-level permissions,
// so the resource must be '*'; the action itself is exact and read-only.
func describeHooksStatement() awsiam.PolicyStatement {
	return awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("DescribeLifecycleHooks"),
		Actions:   jsii.Strings("autoscaling:DescribeLifecycleHooks"),
		Resources: jsii.Strings("*"),
	})
}
