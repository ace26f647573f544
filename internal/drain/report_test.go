package drain

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A Run is done only when no pod is left terminating, blocked, pending,
// refused or protected: each alone, and any two together, keep it going.
func TestReportDoneOnlyWhenNothingIsLeft(t *testing.T) {
	tests := []struct {
		name    string
		targets []*target
		want    bool
	}{
		{"evicted and gone", []*target{{key: "ns/a", state: stateEvicted, isGone: true}}, true},
		{"terminating", []*target{{key: "ns/a", state: stateEvicted}}, false},
		{"terminating and blocked", []*target{
			{key: "ns/a", state: stateEvicted},
			{key: "ns/b", state: stateBlocked},
		}, false},
		{"refused and protected", []*target{
			{key: "ns/a", state: stateFailed, detail: "forbidden"},
			{key: "ns/b", protected: true},
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &run{d: New(nil, DefaultConfig(), nil), req: Request{Node: "n1"}, targets: map[string]*target{}}
			for _, tg := range tt.targets {
				r.targets[tg.key] = tg
			}
			if got := r.report(); got.Done != tt.want {
				t.Errorf("report Done = %v, want %v (report %+v)", got.Done, tt.want, got)
			}
		})
	}
}

// A pod a budget refused is listed with its refusals, and marked evicted
// once it was let go in the end: the alarm on blocked drains counts only
// the pods still held.
func TestReportBlocksMarkThePodsLetGo(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	r := &run{d: New(nil, DefaultConfig(), nil), req: Request{Node: "n1"}, targets: map[string]*target{
		"ns/held": {key: "ns/held", state: stateBlocked, budget: "db", refusedFirst: t0, refusedLast: t0.Add(time.Second), refusals: 2},
		"ns/let":  {key: "ns/let", state: stateEvicted, isGone: true, budget: "web", refusedFirst: t0, refusedLast: t0, refusals: 1},
		"ns/free": {key: "ns/free", state: stateEvicted, isGone: true},
	}}
	want := []Block{
		{Pod: "ns/held", Budget: "db", First: t0, Last: t0.Add(time.Second), Refusals: 2},
		{Pod: "ns/let", Budget: "web", First: t0, Last: t0, Refusals: 1, Evicted: true},
	}
	if diff := cmp.Diff(want, r.report().Blocks); diff != "" {
		t.Errorf("report Blocks (-want +got):\n%s", diff)
	}
}
