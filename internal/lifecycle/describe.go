package lifecycle

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"

	"github.com/drainpipe/drainpipe/internal/awserr"
)

// describeAPI is the part of the Auto Scaling client that reads hooks.
type describeAPI interface {
	DescribeLifecycleHooks(ctx context.Context, in *autoscaling.DescribeLifecycleHooksInput, optFns ...func(*autoscaling.Options)) (*autoscaling.DescribeLifecycleHooksOutput, error)
}

// timeoutTTL bounds how long a hook's heartbeat timeout is trusted; hooks
// are rarely changed, and a warm function should notice when they are.
const timeoutTTL = 15 * time.Minute

type hookKey struct{ asg, hook string }

type cachedTimeout struct {
	d  time.Duration
	at time.Time
}

// timeouts caches DescribeLifecycleHooks answers per group and hook.
type timeouts struct {
	api describeAPI
	mu  sync.Mutex
	by  map[hookKey]cachedTimeout
}

// HeartbeatTimeout returns the hook's heartbeat timeout, asking Auto
// Scaling once per group and hook (cached for timeoutTTL).
func (c *Client) HeartbeatTimeout(ctx context.Context, asg, hook string) (time.Duration, error) {
	t := c.timeouts
	if t == nil {
		return 0, fmt.Errorf("describing lifecycle hook %s/%s: client cannot describe hooks", asg, hook)
	}
	k := hookKey{asg, hook}
	t.mu.Lock()
	e, ok := t.by[k]
	t.mu.Unlock()
	if ok && time.Since(e.at) < timeoutTTL {
		return e.d, nil
	}
	out, err := t.api.DescribeLifecycleHooks(ctx, &autoscaling.DescribeLifecycleHooksInput{
		AutoScalingGroupName: aws.String(asg), LifecycleHookNames: []string{hook},
	})
	if err != nil {
		return 0, fmt.Errorf("describing lifecycle hook %s/%s: %w", asg, hook, awserr.Classify(err))
	}
	for _, h := range out.LifecycleHooks {
		if aws.ToString(h.LifecycleHookName) != hook || h.HeartbeatTimeout == nil {
			continue
		}
		d := time.Duration(*h.HeartbeatTimeout) * time.Second
		t.mu.Lock()
		t.by[k] = cachedTimeout{d: d, at: time.Now()}
		t.mu.Unlock()
		return d, nil
	}
	return 0, fmt.Errorf("describing lifecycle hook %s/%s: no such hook", asg, hook)
}
