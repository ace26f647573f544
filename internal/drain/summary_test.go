package drain

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSummarizeCarriesRefusalsAcrossRuns(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	req := Request{Node: "n1", Kind: "asg-lifecycle", EventID: "ev-1", Evict: true}
	first := Summarize(Summary{}, req, Report{
		Evicted: []string{"ns/a"}, BlockedByPDB: []string{"ns/db-0"}, Elapsed: 10 * time.Second,
		Blocks:  []Block{{Pod: "ns/db-0", Budget: "db", First: t0, Last: t0.Add(9 * time.Second), Refusals: 4}},
		Skipped: []Skipped{{Pod: "kube-system/cni", Reason: reasonDaemonSet}},
	}, t0.Add(10*time.Second))
	second := Summarize(first, req, Report{
		Evicted: []string{"ns/db-0"}, Elapsed: 5 * time.Second, Done: true,
		Blocks: []Block{{Pod: "ns/db-0", First: t0.Add(20 * time.Second), Last: t0.Add(22 * time.Second), Refusals: 2, Evicted: true}},
	}, t0.Add(30*time.Second))
	want := Summary{Kind: "asg-lifecycle", EventID: "ev-1", State: "done", Started: t0, Updated: t0.Add(30 * time.Second),
		RunMillis: 5000, Runs: 2, Evicted: 2,
		Blocked: []Block{{Pod: "ns/db-0", Budget: "db", First: t0, Last: t0.Add(22 * time.Second), Refusals: 6, Evicted: true}}}
	if diff := cmp.Diff(want, second); diff != "" {
		t.Errorf("second Run's summary (-want +got):\n%s", diff)
	}
	if first.State != "draining" || len(first.LeftOnPurpose) != 1 {
		t.Errorf("first Run's summary = %+v, want draining with the DaemonSet pod left on purpose", first)
	}
}

func TestSummaryIsBounded(t *testing.T) {
	var rep Report
	for i := range 1000 {
		pod := fmt.Sprintf("namespace-with-a-long-name/pod-with-a-long-name-%04d", i)
		rep.Blocks = append(rep.Blocks, Block{Pod: pod, Budget: "budget", Refusals: 1})
		rep.Stuck = append(rep.Stuck, pod)
		rep.Skipped = append(rep.Skipped, Skipped{Pod: pod, Reason: reasonDaemonSet})
	}
	s := Summarize(Summary{}, Request{Node: "n1", Kind: "spot-interruption"}, rep, time.Now())
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 8<<10 || s.More != 3*(1000-maxListed) {
		t.Errorf("summary of 3000 entries: %d bytes, more = %d; want at most 8 KiB and the rest counted", len(b), s.More)
	}
}

// BlockedSince is the earliest first refusal of a pod still blocked: a pod
// let go in the end no longer counts.
func TestSummaryBlockedSince(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	s := Summary{Blocked: []Block{
		{Pod: "ns/a", First: t0, Evicted: true},
		{Pod: "ns/b", First: t0.Add(time.Minute)},
		{Pod: "ns/c", First: t0.Add(2 * time.Minute)},
	}}
	if got := s.BlockedSince(); !got.Equal(t0.Add(time.Minute)) {
		t.Errorf("BlockedSince = %v, want %v (ns/a was evicted)", got, t0.Add(time.Minute))
	}
	if got := (Summary{Blocked: []Block{{Pod: "ns/a", First: t0, Evicted: true}}}).BlockedSince(); !got.IsZero() {
		t.Errorf("BlockedSince with nothing blocked = %v, want zero", got)
	}
}
