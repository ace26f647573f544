package main

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/test/esm"
)

func TestStackMemoryMB(t *testing.T) {
	got, err := stackMemoryMB("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if got < 128 || got > 10240 {
		t.Errorf("stack memory %d MB, want Lambda's 128–10240", got)
	}
}

func TestBilled(t *testing.T) {
	// 1.0004 s bills 1.001 s; 2 s bills 2 s: 3.001 s at 512 MB.
	invs := []esm.Invocation{{Duration: 1000400 * time.Microsecond}, {Duration: 2 * time.Second}}
	if got, want := billed(invs, 512), 3.001/2; math.Abs(got-want) > 1e-9 {
		t.Errorf("billed = %v GB-s, want %v", got, want)
	}
}

func TestPodMonthly(t *testing.T) {
	// 730 h × (0.05 vCPU × $0.03238 + 0.0625 GB × $0.00356) ≈ $1.34.
	if got := podMonthly(); math.Abs(got-1.344) > 0.01 {
		t.Errorf("podMonthly = %.3f, want about 1.344", got)
	}
}

func TestCostCountsSQSRequests(t *testing.T) {
	invs := []esm.Invocation{
		{Messages: 10, Outcome: "ok"},                 // a receive and a batch delete
		{Messages: 10, Failed: 3, Outcome: "partial"}, // the same: seven deleted
		{Messages: 10, Failed: 10, Outcome: "partial"},
		{Messages: 10, Outcome: "timeout"}, // nothing deleted: the batch returns
	}
	if got := esmSQSCalls(invs); got != 6 {
		t.Errorf("event source SQS requests = %d, want 6", got)
	}
	c := cost{nodes: 2, sqs: 6, invocations: 4}
	want := (4*lambdaPerRequest + 6*sqsPerRequest) / 2
	if got := c.dollars(); math.Abs(got-want) > 1e-15 {
		t.Errorf("dollars = %v, want %v with the SQS requests", got, want)
	}
	if got := (cost{cordonOnly: true}).String(); !strings.Contains(got, "cordon only") {
		t.Errorf("the floor's cost should say its requests are the cordon's only: %s", got)
	}
	if p := c.add(c); p.nodes != 4 || p.sqs != 12 {
		t.Errorf("pooled cost %+v", p)
	}
}
