package drain

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/hold"
)

// The worst case of every annotation Drainpipe writes, in characters as
// the admission policy counts them, fits the policy's bounds: the drain
// report MaxReportChars, every other value half of MaxAnnotationChars at
// most (room to grow).
func TestAnnotationsFitThePolicyBounds(t *testing.T) {
	const (
		pod     = 63 + 1 + 253 // namespace/name at their longest
		kind    = 63           // a taint value at its longest
		eventID = 512          // a Health event ARN at its longest (internal/event)
	)
	long := func(n int) string { return strings.Repeat("a", n) }
	escaped := strings.Repeat("<", 2*maxText) // each "<" is six characters in JSON
	at := time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.FixedZone("", -12*3600))
	req := Request{Node: long(253), Kind: long(kind), EventID: long(eventID), Deadline: at}

	var rep Report
	for range 3 * maxListed {
		rep.Blocks = append(rep.Blocks, Block{Pod: long(pod), Budget: escaped, First: at, Last: at, Refusals: 1 << 62, Evicted: true})
		rep.Failed = append(rep.Failed, Skipped{Pod: long(pod), Reason: escaped})
		rep.Skipped = append(rep.Skipped, Skipped{Pod: long(pod), Reason: escaped})
		rep.DeletedAtDeadline = append(rep.DeletedAtDeadline, long(pod))
		rep.Stuck = append(rep.Stuck, long(pod))
		rep.Protected = append(rep.Protected, long(pod))
	}
	prev := Summary{Kind: req.Kind, EventID: req.EventID, Started: at, Runs: 1 << 62, Evicted: 1 << 62}
	report := Summarize(prev, req, rep, at)
	report.RunMillis, report.Terminating, report.Pending, report.More = 1<<62, 1<<62, 1<<62, 1<<62
	if rep.Failed[0].Reason != escaped {
		t.Error("Summarize changed the Report's reasons")
	}

	in := Interruption{Kind: long(kind), Deadline: at.UTC().Format(annotationTimeLayout), EventID: long(eventID),
		EvictAt: at.UTC().Format(annotationTimeLayout)}
	prevLabel := long(63)
	restore, _ := json.Marshal(restoreRecord{Unschedulable: true, Label: true, LabelPrevious: &prevLabel})
	var acted []string
	for range maxActed {
		acted = append(acted, ScheduledKey(long(64), at))
	}
	actedJSON, _ := json.Marshal(acted)
	sum, _ := json.Marshal(report)
	var holds hold.Set
	for i := range hold.Max + 1 {
		h := hold.Of(event.Interruption{Kind: event.Kind(long(kind)), EventID: fmt.Sprint(i) + long(eventID-3), Time: at,
			Deadline: at, End: at}, long(12), at)
		h.Time = at.Format(time.RFC3339Nano)
		holds, _ = holds.With(h)
	}

	for _, c := range []struct {
		name, value string
		max         int
	}{
		{AnnotationReport, string(sum), MaxReportChars},
		{AnnotationHolds, holds.Encode(), MaxHoldsChars},
		{AnnotationInterruption, in.encode(), MaxAnnotationChars / 2},
		{AnnotationRestore, string(restore), MaxAnnotationChars / 2},
		{AnnotationActed, string(actedJSON), MaxAnnotationChars / 2},
		{AnnotationEventID, req.EventID, MaxAnnotationChars / 2},
		{AnnotationThreatTime, at.Format(time.RFC3339Nano), MaxAnnotationChars / 2},
	} {
		n := utf8.RuneCountInString(c.value)
		t.Logf("%s: worst case %d characters (bound %d)", c.name, n, c.max)
		if n > c.max {
			t.Errorf("%s: worst case %d characters, over %d", c.name, n, c.max)
		}
	}
}
