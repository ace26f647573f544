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
// A failed lookup (access denied, no such hook) is remembered for
// failureTTL, so a batch does not ask again for every hook and check.
const (
	timeoutTTL = 15 * time.Minute
	failureTTL = time.Minute
)

type hookKey struct{ asg, hook string }

type cachedTimeout struct {
	d     time.Duration
	err   error
	until time.Time // trusted until then
}

// cached is an answer read at at, trusted for its TTL.
func cached(d time.Duration, err error, at time.Time) cachedTimeout {
	ttl := timeoutTTL
	if err != nil {
		ttl = failureTTL
	}
	return cachedTimeout{d: d, err: err, until: at.Add(ttl)}
}

func (c cachedTimeout) fresh() bool { return time.Now().Before(c.until) }

// timeouts caches DescribeLifecycleHooks answers per group and hook.
type timeouts struct {
	api    describeAPI
	mu     sync.Mutex
	by     map[hookKey]cachedTimeout
	flying map[hookKey]*flight // lookups under way
	joined func()              // tests: called when a caller waits on another's lookup
}

// flight is one lookup under way; done closes once its answer is set.
type flight struct {
	done chan struct{}
	d    time.Duration
	err  error
	own  bool // the error is the asker's own deadline, not an answer
}

// HeartbeatTimeout returns the hook's heartbeat timeout, asking Auto
// Scaling once per group and hook (cached for timeoutTTL). Callers asking
// while a lookup of the same hook is under way wait for its answer: a
// batch's hooks are prepared at once, and each would otherwise ask.
func (c *Client) HeartbeatTimeout(ctx context.Context, asg, hook string) (time.Duration, error) {
	t := c.timeouts
	if t == nil {
		return 0, fmt.Errorf("describing lifecycle hook %s/%s: client cannot describe hooks", asg, hook)
	}
	k := hookKey{asg, hook}
	for {
		t.mu.Lock()
		if e, ok := t.by[k]; ok && e.fresh() {
			t.mu.Unlock()
			return e.d, e.err
		}
		f, ok := t.flying[k]
		if !ok {
			f = &flight{done: make(chan struct{})}
			t.flying[k] = f
			t.mu.Unlock()
			return t.lead(ctx, k, f)
		}
		t.mu.Unlock()
		if t.joined != nil {
			t.joined()
		}
		select {
		case <-f.done:
		case <-ctx.Done():
			return 0, fmt.Errorf("describing lifecycle hook %s/%s: %w", asg, hook, ctx.Err())
		}
		if !f.own {
			return f.d, f.err
		}
		// The lookup ended on its asker's deadline: ask again.
	}
}

// lead makes the lookup f stands for and shares its answer.
func (t *timeouts) lead(ctx context.Context, k hookKey, f *flight) (time.Duration, error) {
	d, err := t.describe(ctx, k.asg, k.hook)
	f.d, f.err, f.own = d, err, err != nil && ctx.Err() != nil
	t.mu.Lock()
	delete(t.flying, k)
	if !f.own { // our own deadline says nothing about the hook
		t.by[k] = cached(d, err, time.Now())
	}
	t.mu.Unlock()
	close(f.done)
	return d, err
}

func (t *timeouts) describe(ctx context.Context, asg, hook string) (time.Duration, error) {
	out, err := t.api.DescribeLifecycleHooks(ctx, &autoscaling.DescribeLifecycleHooksInput{
		AutoScalingGroupName: aws.String(asg), LifecycleHookNames: []string{hook},
	})
	if err != nil {
		return 0, fmt.Errorf("describing lifecycle hook %s/%s: %w", asg, hook, awserr.Classify(err))
	}
	for _, h := range out.LifecycleHooks {
		if aws.ToString(h.LifecycleHookName) == hook && h.HeartbeatTimeout != nil {
			return time.Duration(*h.HeartbeatTimeout) * time.Second, nil
		}
	}
	return 0, fmt.Errorf("describing lifecycle hook %s/%s: no such hook", asg, hook)
}
