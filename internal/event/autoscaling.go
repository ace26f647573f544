package event

import (
	"encoding/json"
	"fmt"
	"time"
)

// Auto Scaling's values for lifecycle transitions and its own service name.
const (
	TransitionTerminating = "autoscaling:EC2_INSTANCE_TERMINATING"
	TransitionLaunching   = "autoscaling:EC2_INSTANCE_LAUNCHING"
	testNotification      = "autoscaling:TEST_NOTIFICATION"
	autoScalingService    = "AWS Auto Scaling"
)

// lifecycleFields are shared by the EventBridge detail and the notification
// Auto Scaling sends straight to SQS or SNS.
type lifecycleFields struct {
	LifecycleActionToken string `json:"LifecycleActionToken"`
	AutoScalingGroupName string `json:"AutoScalingGroupName"`
	LifecycleHookName    string `json:"LifecycleHookName"`
	EC2InstanceID        string `json:"EC2InstanceId"`
	LifecycleTransition  string `json:"LifecycleTransition"`
	Origin               string `json:"Origin"`
	Destination          string `json:"Destination"`
}

// notification is a message Auto Scaling sends to an SQS queue or SNS
// topic: a lifecycle action, a test notification, or (from the group's
// notification configuration) a launch or terminate report.
type notification struct {
	lifecycleFields
	Service   string `json:"Service"`
	Event     string `json:"Event"`
	Time      string `json:"Time"`
	AccountID string `json:"AccountId"`
	RequestID string `json:"RequestId"`
}

func (f lifecycleFields) check() (*Lifecycle, error) {
	if err := checkInstanceID(f.EC2InstanceID); err != nil {
		return nil, err
	}
	if err := checkName("Auto Scaling group name", f.AutoScalingGroupName); err != nil {
		return nil, err
	}
	if err := checkPattern("lifecycle hook name", f.LifecycleHookName, hookPattern); err != nil {
		return nil, err
	}
	if err := checkPattern("lifecycle action token", f.LifecycleActionToken, tokenPattern); err != nil {
		return nil, err
	}
	return &Lifecycle{
		ASG:         f.AutoScalingGroupName,
		Hook:        f.LifecycleHookName,
		Token:       f.LifecycleActionToken,
		Transition:  f.LifecycleTransition,
		InstanceID:  f.EC2InstanceID,
		Origin:      clip(f.Origin),
		Destination: clip(f.Destination),
	}, nil
}

func lifecycleInterruption(lc *Lifecycle, id, account, region string, t time.Time) Interruption {
	if lc.Transition == TransitionLaunching {
		summary := "Auto Scaling launch lifecycle action"
		if lc.ToWarmPool() {
			summary += " into the warm pool (completed at once: no node to wait for)"
		}
		return Interruption{Kind: KindASGLaunchLifecycle, Instances: []string{lc.InstanceID}, EventID: id, Time: t,
			Account: account, Region: region, Lifecycle: lc, Summary: summary}
	}
	return Interruption{
		Kind:      KindASGLifecycle,
		Instances: []string{lc.InstanceID},
		EventID:   id,
		Time:      t,
		Account:   account,
		Region:    region,
		Lifecycle: lc,
		Summary:   "Auto Scaling terminate lifecycle action",
	}
}

// parseLifecycleAction reads EventBridge's EC2 Instance-terminate or
// Instance-launch Lifecycle Action; the detail's transition must match the
// detail-type's.
func parseLifecycleAction(h header, detailType, transition string, raw json.RawMessage) (Parsed, error) {
	var f lifecycleFields
	if err := decodeDetail(raw, &f); err != nil {
		return Parsed{}, err
	}
	if f.LifecycleTransition != transition {
		return Parsed{}, rejectf("%s with lifecycle transition %q", detailType, clip(f.LifecycleTransition))
	}
	lc, err := f.check()
	if err != nil {
		return Parsed{}, err
	}
	return act(lifecycleInterruption(lc, h.id, h.account, h.region, h.time))
}

// parseAutoScaling reads a notification Auto Scaling sent without
// EventBridge. It carries no region; Auto Scaling's RequestId serves as the
// event ID.
func parseAutoScaling(body []byte) (Parsed, error) {
	var n notification
	if err := json.Unmarshal(body, &n); err != nil {
		return Parsed{}, rejectf("decoding Auto Scaling notification: %w", err)
	}
	if n.Service != autoScalingService {
		return Parsed{}, rejectf("Auto Scaling notification from service %q, not %q", clip(n.Service), autoScalingService)
	}
	if n.Event == testNotification {
		return ignore("%s: sent when a hook or notification target is set up", testNotification)
	}
	if n.LifecycleTransition == "" && n.Event != "" {
		return ignore("Auto Scaling notification %q is not a lifecycle action", clip(n.Event))
	}
	if n.LifecycleTransition != TransitionTerminating && n.LifecycleTransition != TransitionLaunching {
		return Parsed{}, rejectf("unknown lifecycle transition %q", clip(n.LifecycleTransition))
	}
	lc, err := n.check()
	if err != nil {
		return Parsed{}, err
	}
	if err := checkPattern("RequestId (event id)", n.RequestID, eventIDPattern); err != nil {
		return Parsed{}, err
	}
	var t time.Time
	if n.Time != "" {
		if t, err = parseTime("notification time", n.Time); err != nil {
			return Parsed{}, err
		}
	}
	if n.AccountID != "" {
		if err := checkAccount(n.AccountID); err != nil {
			return Parsed{}, err
		}
	}
	return act(lifecycleInterruption(lc, n.RequestID, n.AccountID, "", t))
}

func sampleTerminate(s SampleSpec, e *SampleEvent) error {
	return sampleLifecycle(s, e, TransitionTerminating, "AutoScalingGroup", "EC2")
}

func sampleLaunch(s SampleSpec, e *SampleEvent) error {
	return sampleLifecycle(s, e, TransitionLaunching, "EC2", "AutoScalingGroup")
}

// sampleLifecycle is a lifecycle action of the group's hook, under a new
// token unless one is given.
func sampleLifecycle(s SampleSpec, e *SampleEvent, transition, origin, destination string) error {
	token := s.Token
	if token == "" {
		token = s.NewID()
	}
	e.Detail = map[string]string{"LifecycleActionToken": token, "AutoScalingGroupName": s.Group, "LifecycleHookName": s.Hook,
		"EC2InstanceId": s.Instance, "LifecycleTransition": transition, "Origin": origin, "Destination": destination}
	e.Resources = []string{fmt.Sprintf("arn:aws:autoscaling:%s:%s:autoScalingGroup:%s:autoScalingGroupName/%s",
		s.Region, s.Account, s.NewID(), s.Group)}
	return nil
}
