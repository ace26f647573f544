package drain

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
)

// maxListed bounds each list of a Summary; the rest is counted in More.
const maxListed = 10

// maxText bounds, in characters, each free text a Summary keeps (a reason,
// often an API server's error message; the budgets of a pod), so the
// report has a worst case: see MaxReportChars.
const maxText = 200

// What the admission policy (deploy/admission-policy.yaml) lets group
// drainpipe write in one annotation value, in characters: the drain report
// up to MaxReportChars, the node's holds up to MaxHoldsChars, every other
// annotation Drainpipe writes (on a node or a pod) up to MaxAnnotationChars. The worst case of each fits; a test
// measures it, and another checks the policy says the same numbers.
const (
	MaxReportChars     = 65536
	MaxHoldsChars      = 8192
	MaxAnnotationChars = 2048
)

// Block is a pod a disruption budget refused to let go.
type Block struct {
	Pod    string `json:"pod"`
	Budget string `json:"pdb,omitempty"` // the PodDisruptionBudget selecting it; several are comma-separated
	// First and Last refusal, and how many, over the drain's Runs.
	First    time.Time `json:"first"`
	Last     time.Time `json:"last"`
	Refusals int       `json:"refusals"`
	Evicted  bool      `json:"evicted,omitempty"` // let go in the end
}

// Summary is a drain's report as kept on the node: counts, and the first
// few pods of each list that needs a person's attention.
type Summary struct {
	Kind    string    `json:"kind"`
	EventID string    `json:"eventId,omitempty"`
	State   string    `json:"state"` // draining (a Run stopped unfinished), evicted (see reportEvicted) or done
	Started time.Time `json:"started"`
	Updated time.Time `json:"updated"`
	// RunMillis is the last Run's duration; Runs counts them.
	RunMillis int64 `json:"runMs"`
	Runs      int   `json:"runs"`

	Evicted           int       `json:"evicted"`
	Terminating       int       `json:"terminating,omitempty"`
	Pending           int       `json:"pending,omitempty"`
	Blocked           []Block   `json:"blocked,omitempty"`
	DeletedAtDeadline []string  `json:"deletedAtDeadline,omitempty"`
	Stuck             []string  `json:"stuck,omitempty"`     // finalizers, dead kubelet
	Protected         []string  `json:"protected,omitempty"` // karpenter.sh/do-not-disrupt, held
	Failed            []Skipped `json:"failed,omitempty"`
	LeftOnPurpose     []Skipped `json:"leftOnPurpose,omitempty"` // DaemonSet, mirror, tolerating, finished
	// More counts entries left out of the lists above to keep it bounded.
	More int `json:"more,omitempty"`
}

// Summarize folds a Run's report into the node's previous summary (zero
// when none, or of another event).
func Summarize(prev Summary, req Request, rep Report, now time.Time) Summary {
	s := Summary{Kind: req.Kind, EventID: req.EventID, State: "draining", Started: now.Add(-rep.Elapsed), Updated: now,
		RunMillis: rep.Elapsed.Milliseconds(), Runs: 1}
	if prev.EventID == req.EventID && prev.Kind == req.Kind && !prev.Started.IsZero() {
		s.Started, s.Runs, s.Evicted = prev.Started, prev.Runs+1, prev.Evicted
	}
	if rep.Done {
		s.State = "done"
	}
	s.Evicted += len(rep.Evicted) + len(rep.FinishedGrants)
	s.Terminating, s.Pending = len(rep.Terminating), len(rep.Pending)
	s.Blocked = mergeBlocks(prev, s, rep.Blocks)
	s.DeletedAtDeadline, s.Stuck, s.Failed, s.Protected = rep.DeletedAtDeadline, rep.Stuck, rep.Failed, rep.Protected
	s.LeftOnPurpose = rep.Skipped
	s.bound()
	return s
}

// mergeBlocks carries the first refusal and the count over from earlier
// Runs of the same drain.
func mergeBlocks(prev, s Summary, blocks []Block) []Block {
	out := slices.Clone(blocks)
	if prev.EventID != s.EventID || prev.Kind != s.Kind {
		return out
	}
	for i := range out {
		if j := slices.IndexFunc(prev.Blocked, func(b Block) bool { return b.Pod == out[i].Pod }); j >= 0 {
			out[i].First = prev.Blocked[j].First
			out[i].Refusals += prev.Blocked[j].Refusals
			out[i].Budget = cmp.Or(out[i].Budget, prev.Blocked[j].Budget)
		}
	}
	return out
}

// BlockedSince is the earliest first refusal of the pods still blocked,
// over the drain's Runs; zero when none is.
func (s Summary) BlockedSince() time.Time {
	var since time.Time
	for _, b := range s.Blocked {
		if !b.Evicted && !b.First.IsZero() && (since.IsZero() || b.First.Before(since)) {
			since = b.First
		}
	}
	return since
}

// bound keeps the first maxListed of each list, still-blocked pods first.
func (s *Summary) bound() {
	slices.SortStableFunc(s.Blocked, func(a, b Block) int {
		if a.Evicted != b.Evicted {
			if a.Evicted {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.Pod, b.Pod)
	})
	for i := range s.Blocked {
		s.Blocked[i].Budget = clipText(s.Blocked[i].Budget)
	}
	s.Failed, s.LeftOnPurpose = clipReasons(s.Failed), clipReasons(s.LeftOnPurpose)
	s.Blocked = clip(s.Blocked, &s.More)
	s.DeletedAtDeadline = clip(s.DeletedAtDeadline, &s.More)
	s.Stuck = clip(s.Stuck, &s.More)
	s.Protected = clip(s.Protected, &s.More)
	s.Failed = clip(s.Failed, &s.More)
	s.LeftOnPurpose = clip(s.LeftOnPurpose, &s.More)
}

func clip[T any](l []T, more *int) []T {
	n := min(len(l), maxListed)
	*more += len(l) - n
	return l[:n]
}

// clipReasons is l with each reason clipped, in a new slice: l may be a
// Report's.
func clipReasons(l []Skipped) []Skipped {
	out := slices.Clone(l)
	for i := range out {
		out[i].Reason = clipText(out[i].Reason)
	}
	return out
}

// clipText cuts s to maxText characters, marking the cut.
func clipText(s string) string {
	if utf8.RuneCountInString(s) <= maxText {
		return s
	}
	return string([]rune(s)[:maxText-1]) + "…"
}

// ReadSummary reads a node's AnnotationReport; false when it has none.
func ReadSummary(node *corev1.Node) (Summary, bool) {
	var s Summary
	raw, ok := node.Annotations[AnnotationReport]
	if !ok || json.Unmarshal([]byte(raw), &s) != nil {
		return Summary{}, false
	}
	return s, true
}
