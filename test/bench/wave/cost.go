package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/esm"
)

// List prices, us-east-1, as published by AWS in 2025 (docs/performance.md
// states them beside the figures): Lambda on arm64 and Fargate on arm64,
// the latter as the price of the node capacity a pod's requests reserve.
const (
	lambdaPerGBSecond = 0.0000133334
	lambdaPerRequest  = 0.20 / 1e6
	sqsPerRequest     = 0.40 / 1e6 // standard queue, past the free tier
	fargatePerVCPUHr  = 0.03238
	fargatePerGBHr    = 0.00356
	hoursPerMonth     = 730
)

// The always-on peer's pod: aws-node-termination-handler's Helm chart
// requests (50m CPU, 64 MiB), one replica in queue mode.
const (
	podCPUMilli = 50
	podMemMiB   = 64
)

// cost is what one run's interruptions cost, in total.
type cost struct {
	nodes       int     // interrupted nodes
	invocations int     // function invocations
	gbSeconds   float64 // billed: each invocation's duration, rounded up to the millisecond, × memory
	kube        int     // Kubernetes requests (dispatched or rejected by APF)
	ec2, asg    int     // EC2 and Auto Scaling calls
	sqs         int     // SQS requests: the function's own and the event source's (esmSQSCalls)
	cordonOnly  bool    // the floor: its requests cordon, they drain nothing
}

// esmSQSCalls is what the event source's pollers ask of SQS for invs, as
// Lambda bills them to the queue's owner: per invocation one
// ReceiveMessage that returned its batch and one DeleteMessageBatch for
// the records it did not report failed. The pollers' empty long polls
// between waves are a fixed monthly cost, not a node's, and not counted.
func esmSQSCalls(invs []esm.Invocation) int {
	n := 0
	for _, inv := range invs {
		n++
		if inv.Outcome != "timeout" && inv.Outcome != "crashed" && inv.Outcome != "error" && inv.Failed < inv.Messages {
			n++
		}
	}
	return n
}

// billed is the GB-seconds Lambda bills for invocations at memoryMB.
func billed(invs []esm.Invocation, memoryMB int) float64 {
	var ms int64
	for _, inv := range invs {
		ms += int64(math.Ceil(float64(inv.Duration) / float64(time.Millisecond)))
	}
	return float64(ms) / 1000 * float64(memoryMB) / 1024
}

// bill adds the invocations of m to r's cost: their GB-seconds at
// memoryMB and the event source's SQS requests for them.
func (r *result) bill(memoryMB int, mappings ...*esm.Mapping) {
	for _, m := range mappings {
		if m == nil {
			continue
		}
		invs := m.Invocations()
		r.invocations += len(invs)
		r.peak += m.PeakEnvironments()
		r.cost.invocations += len(invs)
		r.cost.gbSeconds += billed(invs, memoryMB)
		r.cost.sqs += esmSQSCalls(invs)
	}
}

// awsCalls counts the EC2, Auto Scaling and SQS calls the fake served
// (the function's own; the event source's are in process, esmSQSCalls).
func awsCalls(fake *awsfake.Server) (ec2, asg, sqs int) {
	for _, c := range fake.Calls() {
		switch c.Service {
		case awsfake.ServiceEC2:
			ec2++
		case awsfake.ServiceAutoScaling:
			asg++
		case awsfake.ServiceSQS:
			sqs++
		}
	}
	return ec2, asg, sqs
}

func (c cost) per(n int) float64 { return float64(n) / float64(max(1, c.nodes)) }

// dollars is the Lambda and SQS bill per interrupted node.
func (c cost) dollars() float64 {
	return (c.gbSeconds*lambdaPerGBSecond + float64(c.invocations)*lambdaPerRequest + float64(c.sqs)*sqsPerRequest) / float64(max(1, c.nodes))
}

func (c cost) String() string {
	kube := "Kubernetes requests"
	if c.cordonOnly {
		kube += " (cordon only: it drains nothing)"
	}
	return fmt.Sprintf("per interrupted node: %.2f invocations, %.3f GB-s, %.2f SQS requests ($%.7f), %.1f %s, %.2f EC2 and %.2f Auto Scaling calls",
		c.per(c.invocations), c.gbSeconds/float64(max(1, c.nodes)), c.per(c.sqs), c.dollars(), c.per(c.kube), kube, c.per(c.ec2), c.per(c.asg))
}

// add pools another round's cost into c.
func (c cost) add(d cost) cost {
	c.nodes += d.nodes
	c.invocations += d.invocations
	c.gbSeconds += d.gbSeconds
	c.kube += d.kube
	c.ec2 += d.ec2
	c.asg += d.asg
	c.sqs += d.sqs
	return c
}

// podMonthly is what an always-on pod at the chart's requests costs a
// month, its requests priced at Fargate's per-unit rates.
func podMonthly() float64 {
	return hoursPerMonth * (podCPUMilli/1000.0*fargatePerVCPUHr + podMemMiB/1024.0*fargatePerGBHr)
}

// memoryPattern finds the memory default in the stack's Defaults.
var memoryPattern = regexp.MustCompile(`(?m)^\s*MemoryMB:\s*(\d+),`)

// stackMemoryMB reads the function's memory setting from the stack's
// defaults (infra/stack/props.go under root), so the bill follows the
// stack.
func stackMemoryMB(root string) (int, error) {
	path := filepath.Join(root, "infra", "stack", "props.go")
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("reading the stack's memory default: %w", err)
	}
	m := memoryPattern.FindSubmatch(b)
	if m == nil {
		return 0, fmt.Errorf("no MemoryMB default in %s: pass -memory", path)
	}
	return strconv.Atoi(string(m[1]))
}
