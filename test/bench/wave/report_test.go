package main

import (
	"strings"
	"testing"
	"time"
)

func TestLastLineWithoutThePeer(t *testing.T) {
	s := time.Second
	res := map[string]*result{
		"drainpipe": {targets: 140, cordonP99: 2 * s, drainedP99: 40 * s},
		"floor":     {targets: 140, cordonP99: s, drainedP99: 20 * s},
	}
	line, ok := lastLine(res)
	if !ok {
		t.Fatal("no last line with drainpipe and floor")
	}
	for _, want := range []string{"bench wave140:", "nth_drained_p99=- ", "ratio_nth=- ", "ratio_limit=2.00 ", "ratio_cordon=2.00 "} {
		if !strings.Contains(line, want) {
			t.Errorf("last line lacks %q:\n%s", want, line)
		}
	}
	res["nth"] = &result{targets: 140, drainedP99: 400 * s}
	if line, _ := lastLine(res); !strings.Contains(line, "ratio_nth=10.0 ") {
		t.Errorf("with the peer, ratio_nth should be 10.0:\n%s", line)
	}
	delete(res, "floor")
	if _, ok := lastLine(res); ok {
		t.Error("a last line without the floor")
	}
}
