package drain

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// Pods deleted to finish an eviction a budget had granted count as
// evicted, with those evicted outright; and the pods a budget still holds
// come before those it let go.
func TestSummarizeCountsGrantsAndListsHeldPodsFirst(t *testing.T) {
	s := Summarize(Summary{}, Request{Node: "n1", Kind: "spot-interruption"}, Report{
		Evicted: []string{"ns/a", "ns/b"}, FinishedGrants: []string{"ns/c"},
		Blocks: []Block{{Pod: "ns/a", Refusals: 1, Evicted: true}, {Pod: "ns/z", Refusals: 1}},
	}, time.Now())
	if s.Evicted != 3 {
		t.Errorf("Evicted = %d, want 3 (two evicted, one grant finished)", s.Evicted)
	}
	if got := []string{s.Blocked[0].Pod, s.Blocked[1].Pod}; !slices.Equal(got, []string{"ns/z", "ns/a"}) {
		t.Errorf("Blocked in order %v, want the pod still held first", got)
	}
}

// A list of exactly maxListed entries is kept whole; past that the rest is
// counted in More.
func TestSummaryListsKeepTheFirstMaxListed(t *testing.T) {
	for _, n := range []int{0, maxListed, maxListed + 3} {
		var rep Report
		for i := range n {
			rep.Stuck = append(rep.Stuck, fmt.Sprintf("ns/p-%02d", i))
		}
		s := Summarize(Summary{}, Request{Node: "n1", Kind: "spot-interruption"}, rep, time.Now())
		if len(s.Stuck) != min(n, maxListed) || s.More != n-len(s.Stuck) || (n > 0 && s.Stuck[0] != "ns/p-00") {
			t.Errorf("%d stuck pods: listed %v, more %d; want the first %d and the rest counted", n, s.Stuck, s.More, min(n, maxListed))
		}
	}
}

// A reason up to maxText characters is kept whole; a longer one is cut to
// maxText characters, the last marking the cut.
func TestClipText(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"short", "forbidden", "forbidden"},
		{"exactly maxText", strings.Repeat("é", maxText), strings.Repeat("é", maxText)},
		{"one more", strings.Repeat("é", maxText+1), strings.Repeat("é", maxText-1) + "…"},
		{"far longer", strings.Repeat("x", 3*maxText), strings.Repeat("x", maxText-1) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := clipText(tt.in); got != tt.want {
				r := []rune(got)
				t.Errorf("clipText(%d characters) = %d characters ending %q, want %d ending %q", utf8.RuneCountInString(tt.in),
					len(r), string(r[max(0, len(r)-3):]), utf8.RuneCountInString(tt.want), string([]rune(tt.want)[max(0, utf8.RuneCountInString(tt.want)-3):]))
			}
		})
	}
}

// ReadSummary reads the report a drain wrote on its node, and reports none
// when the annotation is missing or not a report.
func TestReadSummary(t *testing.T) {
	want := Summary{Kind: "spot-interruption", State: "done", Runs: 1, Evicted: 2}
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		annotations map[string]string
		want        Summary
		ok          bool
	}{
		{"written", map[string]string{AnnotationReport: string(b)}, want, true},
		{"none", nil, Summary{}, false},
		{"not a report", map[string]string{AnnotationReport: "{"}, Summary{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ReadSummary(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: tt.annotations}})
			if diff := cmp.Diff(tt.want, got); ok != tt.ok || diff != "" {
				t.Errorf("ReadSummary ok = %v, want %v; summary (-want +got):\n%s", ok, tt.ok, diff)
			}
		})
	}
}
