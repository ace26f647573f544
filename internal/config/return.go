package config

import (
	"fmt"
	"time"
)

// MaxRebalanceHold is the longest DRAINPIPE_REBALANCE_HOLD: the hold is
// kept as the message's visibility timeout, which SQS caps at 12 hours.
const MaxRebalanceHold = 12 * time.Hour

// DefaultSweepMargin is DRAINPIPE_SWEEP_MARGIN's default; MaxSweepMargin
// its longest value.
const (
	DefaultSweepMargin = 10 * time.Minute
	MaxSweepMargin     = 12 * time.Hour
)

// Return configures which nodes Drainpipe handles and how it gives them
// back (see README, "Return to service").
type Return struct {
	// SkipKarpenter leaves nodes labelled karpenter.sh/nodepool to
	// Karpenter's own interruption handling (DRAINPIPE_KARPENTER_NODES=skip).
	SkipKarpenter bool
	// HandleAutoMode handles EKS Auto Mode nodes (eks.amazonaws.com/
	// compute-type=auto); by default they are left to EKS, which handles
	// their interruptions (DRAINPIPE_AUTO_MODE_NODES=skip).
	HandleAutoMode bool
	// OutOfService taints a node node.kubernetes.io/out-of-service when
	// EC2 reports its instance stopped or terminated, so its volumes
	// detach and its pods move; the taint goes when the instance runs.
	OutOfService bool
	// RebalanceHold is how long a node cordoned only for a rebalance
	// recommendation stays cordoned before it is given back; 0 keeps it.
	RebalanceHold time.Duration
	// SweepMargin is how long past a threat's end (and past its cordon)
	// the sweep waits, the instance still running, before it gives a
	// held node back: the notice that ends the threat normally comes
	// first, and EC2's answers lag its events. 0 gives back as soon as
	// the threat is over (tests).
	SweepMargin time.Duration
}

// DefaultReturn handles Karpenter nodes, uses the out-of-service taint,
// holds a rebalance cordon 30 minutes and gives the sweep a 10-minute margin.
func DefaultReturn() Return {
	return Return{OutOfService: true, RebalanceHold: 30 * time.Minute, SweepMargin: DefaultSweepMargin}
}

func (r *reader) loadReturn(c *Return) {
	r.parse("KARPENTER_NODES", func(v string) error {
		switch v {
		case "handle":
			c.SkipKarpenter = false
		case "skip":
			c.SkipKarpenter = true
		default:
			return fmt.Errorf("want handle or skip, got %q", v)
		}
		return nil
	})
	r.parse("AUTO_MODE_NODES", func(v string) error {
		switch v {
		case "skip":
			c.HandleAutoMode = false
		case "handle":
			c.HandleAutoMode = true
		default:
			return fmt.Errorf("want skip or handle, got %q", v)
		}
		return nil
	})
	r.boolean("OUT_OF_SERVICE", &c.OutOfService)
	r.durationUpTo("REBALANCE_HOLD", "30m", MaxRebalanceHold, &c.RebalanceHold)
	r.durationUpTo("SWEEP_MARGIN", "10m", MaxSweepMargin, &c.SweepMargin)
}
