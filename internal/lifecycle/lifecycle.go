package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/smithy-go"

	"github.com/drainpipe/drainpipe/internal/awserr"
	"github.com/drainpipe/drainpipe/internal/event"
)

// ErrInactive means the lifecycle action is no longer active: completed
// already (by us on an earlier delivery, or by someone else) or timed out.
// Heartbeat returns it; Complete reports it as alreadyDone instead.
var ErrInactive = errors.New("lifecycle action no longer active")

// asgAPI is the part of the Auto Scaling client the Client uses.
type asgAPI interface {
	CompleteLifecycleAction(ctx context.Context, in *autoscaling.CompleteLifecycleActionInput, optFns ...func(*autoscaling.Options)) (*autoscaling.CompleteLifecycleActionOutput, error)
	RecordLifecycleActionHeartbeat(ctx context.Context, in *autoscaling.RecordLifecycleActionHeartbeatInput, optFns ...func(*autoscaling.Options)) (*autoscaling.RecordLifecycleActionHeartbeatOutput, error)
}

var _ asgAPI = (*autoscaling.Client)(nil)

// Client heartbeats and completes lifecycle actions.
type Client struct {
	asg      asgAPI
	timeouts *timeouts // nil when api cannot describe hooks
}

// New returns a Client using api (an *autoscaling.Client).
func New(api asgAPI) *Client {
	c := &Client{asg: api}
	if d, ok := api.(describeAPI); ok {
		c.timeouts = &timeouts{api: d, by: map[hookKey]cachedTimeout{}, flying: map[hookKey]*flight{}}
	}
	return c
}

// Heartbeat extends the action's heartbeat timeout. It returns ErrInactive
// (wrapped) when the action is gone, so a heartbeat loop knows to stop.
func (c *Client) Heartbeat(ctx context.Context, l event.Lifecycle) error {
	if err := validate(l); err != nil {
		return err
	}
	_, err := c.asg.RecordLifecycleActionHeartbeat(ctx, &autoscaling.RecordLifecycleActionHeartbeatInput{
		AutoScalingGroupName: aws.String(l.ASG),
		LifecycleHookName:    aws.String(l.Hook),
		LifecycleActionToken: optional(l.Token),
		InstanceId:           optional(l.InstanceID),
	})
	if err == nil {
		return nil
	}
	if inactive(err) {
		return fmt.Errorf("recording heartbeat for %s: %w: %w", describe(l), ErrInactive, err)
	}
	return fmt.Errorf("recording heartbeat for %s: %w", describe(l), awserr.Classify(err))
}

// Complete lets the instance go (CONTINUE). An action that is no longer
// active counts as done: alreadyDone is true and the error nil.
func (c *Client) Complete(ctx context.Context, l event.Lifecycle) (alreadyDone bool, err error) {
	if err := validate(l); err != nil {
		return false, err
	}
	_, err = c.asg.CompleteLifecycleAction(ctx, &autoscaling.CompleteLifecycleActionInput{
		AutoScalingGroupName:  aws.String(l.ASG),
		LifecycleHookName:     aws.String(l.Hook),
		LifecycleActionResult: aws.String("CONTINUE"),
		LifecycleActionToken:  optional(l.Token),
		InstanceId:            optional(l.InstanceID),
	})
	if err == nil {
		return false, nil
	}
	if inactive(err) {
		return true, nil
	}
	return false, fmt.Errorf("completing %s: %w", describe(l), awserr.Classify(err))
}

// inactive reports Auto Scaling's answer for an action that is completed
// or timed out: a ValidationError "No active Lifecycle Action found with
// token ..." (or "... with instance ID ...").
func inactive(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == "ValidationError" &&
		strings.Contains(api.ErrorMessage(), "No active Lifecycle Action found")
}

func validate(l event.Lifecycle) error {
	if l.ASG == "" || l.Hook == "" || (l.Token == "" && l.InstanceID == "") {
		return fmt.Errorf("validating lifecycle action %s: group, hook and token or instance ID are required", describe(l))
	}
	return nil
}

// describe names an action for errors; the token is an opaque ID, not a
// secret, but it adds nothing a reader needs.
func describe(l event.Lifecycle) string {
	return fmt.Sprintf("%s/%s (instance %s)", l.ASG, l.Hook, l.InstanceID)
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}
