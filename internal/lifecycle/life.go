package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"

	"github.com/drainpipe/drainpipe/internal/awserr"
	"github.com/drainpipe/drainpipe/internal/event"
)

// MaxActionLife is the longest any lifecycle action lasts: Auto Scaling
// ends it at min(100 × heartbeat timeout, 48 h) whatever the heartbeats.
const MaxActionLife = 48 * time.Hour

// ActionLife returns the longest a terminate lifecycle action of group asg
// can last (its hook's global timeout), over the group's terminating hooks
// named in names (all of them when names is empty), with one
// DescribeLifecycleHooks call. An error when it cannot tell.
func (c *Client) ActionLife(ctx context.Context, asg string, names []string) (time.Duration, error) {
	if c.timeouts == nil {
		return 0, fmt.Errorf("describing the lifecycle hooks of %s: client cannot describe hooks", asg)
	}
	out, err := c.timeouts.api.DescribeLifecycleHooks(ctx, &autoscaling.DescribeLifecycleHooksInput{
		AutoScalingGroupName: aws.String(asg), LifecycleHookNames: names,
	})
	if err != nil {
		return 0, fmt.Errorf("describing the lifecycle hooks of %s: %w", asg, awserr.Classify(err))
	}
	var life time.Duration
	for _, h := range out.LifecycleHooks {
		name := aws.ToString(h.LifecycleHookName)
		if aws.ToString(h.LifecycleTransition) != event.TransitionTerminating || (len(names) > 0 && !slices.Contains(names, name)) {
			continue
		}
		d := MaxActionLife
		if h.GlobalTimeout != nil && *h.GlobalTimeout > 0 {
			d = time.Duration(*h.GlobalTimeout) * time.Second
		} else if h.HeartbeatTimeout != nil && *h.HeartbeatTimeout > 0 {
			d = 100 * time.Duration(*h.HeartbeatTimeout) * time.Second
		}
		life = max(life, min(d, MaxActionLife))
	}
	if life == 0 {
		return 0, fmt.Errorf("describing the lifecycle hooks of %s: no terminating hook %v", asg, names)
	}
	return life, nil
}
