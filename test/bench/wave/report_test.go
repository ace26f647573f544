package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// lastLineFields reads the verdict's key=value fields.
func lastLineFields(t *testing.T, line string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range strings.Fields(line)[2:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("field %q without a value in %s", f, line)
		}
		out[k] = v
	}
	return out
}

func TestLastLineCarriesTheVerdict(t *testing.T) {
	s := time.Second
	round := map[string]*result{
		"drainpipe": {targets: 140, cordonP99: 2 * s, drainedP99: 40 * s, cordoned: []time.Duration{s, 2 * s}, drained: []time.Duration{30 * s, 40 * s},
			outcome: outcome{spotGraceful: []time.Duration{30 * s}, hookDrained: []time.Duration{40 * s}, spotLost: 3}},
		"floor": {targets: 140, cordonP99: s, drainedP99: 20 * s, firstPrinciples: 10 * s},
		"paced": {targets: 140, cordonP99: s, drainedP99: 25 * s, outcome: outcome{spotGraceful: []time.Duration{0}}},
	}
	line, ok := lastLine([]map[string]*result{round})
	if !ok {
		t.Fatal("no last line with drainpipe")
	}
	if !strings.HasPrefix(line, "bench wave140: ") {
		t.Errorf("last line starts %q", line)
	}
	f := lastLineFields(t, line)
	want := map[string]string{
		"nth_drained_p99": "-", "ratio_nth": "-", "ratio_cordon": "2.00", "ratio_best_strategy": "2.00", "ratio_lower_bound": "4.00",
		"spot_lost_pods": "3", "paced_spot_lost_pods": "0", "spot_graceful_p99": "30.00", "paced_spot_graceful_p99": "inf",
		"hook_drained_p99": "40.00", "apf_rejected_nofc": "-1",
	}
	for k, v := range want {
		if f[k] != v {
			t.Errorf("%s=%q, want %q", k, f[k], v)
		}
	}
	for _, k := range []string{"cordon_p99", "drained_p99", "neighbour_p99", "cost_gbs_per_node", "kube_per_node", "aws_per_node", "sqs_per_node", "dlq", "hooks_open", "lost_pods"} {
		if _, ok := f[k]; !ok {
			t.Errorf("no %s", k)
		}
	}
	for _, k := range []string{"ratio_cordon", "ratio_best_strategy", "ratio_lower_bound", "cost_gbs_per_node", "spot_graceful_p99", "paced_spot_graceful_p99", "hook_drained_p99"} {
		if _, err := strconv.ParseFloat(f[k], 64); err != nil {
			t.Errorf("%s=%q does not parse: %v", k, f[k], err)
		}
	}
	round["nth"] = &result{targets: 140, drainedP99: 400 * s}
	if line, _ := lastLine([]map[string]*result{round}); lastLineFields(t, line)["ratio_nth"] != "10.00" {
		t.Errorf("with the peer, ratio_nth should be 10.00:\n%s", line)
	}
	// Two rounds: each time is the median of the rounds' p99s, as each
	// ratio is the median of the rounds' ratios, not the p99 of both
	// rounds' nodes together.
	other := map[string]*result{
		"drainpipe": {targets: 140, cordonP99: 4 * s, drainedP99: 80 * s, cordoned: []time.Duration{3 * s, 4 * s}, drained: []time.Duration{70 * s, 80 * s}},
		"floor":     {targets: 140, cordonP99: s, drainedP99: 20 * s, firstPrinciples: 10 * s},
	}
	line, _ = lastLine([]map[string]*result{round, other})
	f = lastLineFields(t, line)
	if f["drained_p99"] != "60.00" || f["cordon_p99"] != "3.00" || f["ratio_lower_bound"] != "6.00" {
		t.Errorf("two rounds: drained_p99=%s cordon_p99=%s ratio_lower_bound=%s, want the medians 60.00 3.00 6.00", f["drained_p99"], f["cordon_p99"], f["ratio_lower_bound"])
	}
	delete(round, "drainpipe")
	if _, ok := lastLine([]map[string]*result{round}); ok {
		t.Error("a last line without drainpipe")
	}
}
