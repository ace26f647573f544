// Package instance looks EC2 instances up and routes them to clusters.
package instance

import "time"

// Instance is what Drainpipe needs to know about one EC2 instance.
type Instance struct {
	ID               string
	State            string // EC2 state name: pending, running, stopping, ...
	PrivateDNSName   string
	AvailabilityZone string
	// Cluster is the configured cluster the instance belongs to; empty
	// when it belongs to none of them.
	Cluster    string
	Tags       map[string]string
	LaunchTime time.Time
	// Lifecycle is EC2's InstanceLifecycle: "spot", "capacity-block", or
	// empty for an On-Demand instance.
	Lifecycle string
}

// Spot reports whether EC2 says the instance is a Spot instance.
func (i Instance) Spot() bool { return i.Lifecycle == "spot" }
