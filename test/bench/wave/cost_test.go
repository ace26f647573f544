package main

import (
	"math"
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
