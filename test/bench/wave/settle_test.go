package main

import (
	"os"
	"testing"
)

func TestCPUTicks(t *testing.T) {
	before, err := cpuTicks(map[string]int{"self": os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	// Burn CPU until the count moves: it is this process's own time.
	x := 0
	for after := before; after == before; {
		for i := range 10_000_000 {
			x += i
		}
		if after, err = cpuTicks(map[string]int{"self": os.Getpid()}); err != nil {
			t.Fatal(err)
		}
		if after < before {
			t.Fatalf("CPU ticks went back from %d to %d", before, after)
		}
	}
	_ = x
	if _, err := cpuTicks(map[string]int{"gone": 1 << 30}); err == nil {
		t.Error("no error reading a process that does not exist")
	}
}
