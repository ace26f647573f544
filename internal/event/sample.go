package event

import (
	"fmt"
	"time"
)

// SampleSpec is what a sample event says: `drainpipe event`'s flags.
type SampleSpec struct {
	Instance, Account, Region string
	// Token, Group and Hook are a lifecycle action's.
	Token, Group, Hook string
	// State is a state change's EC2 state.
	State string
	// Reservation is a Capacity Block's reservation id.
	Reservation string
	// Now is when the event is sent.
	Now time.Time
	// In is the time left before the instance goes when InSet; else the
	// kind's Sample.In.
	In    time.Duration
	InSet bool
	// NewID returns a new UUID (action tokens, Health event ARNs).
	NewID func() string
}

// SampleEvent is the part of an EventBridge event a sample sets.
type SampleEvent struct {
	DetailType, Source string
	Time               time.Time
	Resources          []string
	Detail             any
}

// sampleBuild fills e, which holds the kind's first detail-type and its
// source, the time s.Now and the instance's ARN, for s (s.In settled).
type sampleBuild func(s SampleSpec, e *SampleEvent) error

// Samples lists the kinds with a sample event, by their Sample.Name, in
// the kinds table's order.
func Samples() []KindInfo {
	var out []KindInfo
	for _, r := range kindTable {
		if r.Sample != nil {
			out = append(out, r)
		}
	}
	return out
}

// WriteSample builds the sample event of the kind whose Sample.Name is
// name, as AWS documents its detail-type; errors are about the spec.
func WriteSample(name string, s SampleSpec) (SampleEvent, error) {
	var row *KindInfo
	for _, r := range kindTable {
		if r.Sample != nil && r.Sample.Name == name {
			row = &r
			break
		}
	}
	if row == nil {
		return SampleEvent{}, fmt.Errorf("unknown KIND %q", name)
	}
	if !s.InSet {
		s.In = row.Sample.In
	} else if row.Sample.In == 0 {
		return SampleEvent{}, fmt.Errorf("--in: a %s event has no deadline", name)
	}
	e := SampleEvent{DetailType: row.DetailTypes[0], Source: row.Source, Time: s.Now, Resources: []string{s.instanceARN()}}
	if row.Sample.build != nil {
		if err := row.Sample.build(s, &e); err != nil {
			return SampleEvent{}, err
		}
	}
	return e, nil
}

func (s SampleSpec) instanceARN() string {
	return fmt.Sprintf("arn:aws:ec2:%s:%s:instance/%s", s.Region, s.Account, s.Instance)
}

// sampleNotice sets e's time a fixed notice before the instance goes:
// the deadline of a Spot warning or a shutdown is set by the event's time.
func sampleNotice(s SampleSpec, e *SampleEvent, label string) error {
	if s.In > SpotNotice {
		return fmt.Errorf("--in: a %s comes %s before the instance goes; --in is at most that", label, SpotNotice)
	}
	e.Time = s.Now.Add(s.In - SpotNotice)
	return nil
}
