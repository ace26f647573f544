package event

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A Capacity Block end-date in a form not known here falls back to the
// documented lead (terminations ten minutes after the warning) instead of
// rejecting the notice.
func TestBlockExpiryUnreadableEndDateFallsBack(t *testing.T) {
	base := readTestdata(t, "eventbridge-capacity-block-expiry.json")
	for _, end := range []string{"2026-11-20 12:00:00 UTC", "1763640000", "Nov 20, 2026 12:00 PM"} {
		t.Run(end, func(t *testing.T) {
			body := bytes.Replace(base, []byte(`"2026-11-20T12:00:00Z"`), []byte(quote(end)), 1)
			got, err := Parse(body)
			if err != nil || len(got.Interruptions) != 1 {
				t.Fatalf("Parse = %+v, %v; want one interruption", got, err)
			}
			in := got.Interruptions[0]
			if want := mustTime(t, "2026-11-20T11:30:00Z"); !in.Deadline.Equal(want) {
				t.Errorf("deadline = %s, want %s (the warning's time plus ten minutes)", in.Deadline, want)
			}
			if !strings.Contains(in.Summary, "unreadable") {
				t.Errorf("summary %q does not say the end date was unreadable", in.Summary)
			}
		})
	}
}

// stopping and shutting-down get a deadline ShutdownNotice after the
// event (the OS is already shutting down); stopped and terminated have
// none (the instance is gone: the pipeline's own rules apply).
func TestStateChangeDeadlines(t *testing.T) {
	base := readTestdata(t, "eventbridge-state-change-stopping.json")
	at := mustTime(t, "2026-11-20T10:05:54Z")
	for state, want := range map[string]time.Time{
		"stopping": at.Add(ShutdownNotice), "shutting-down": at.Add(ShutdownNotice),
		"stopped": {}, "terminated": {},
	} {
		t.Run(state, func(t *testing.T) {
			got, err := Parse(bytes.Replace(base, []byte(`"stopping"`), []byte(quote(state)), 1))
			if err != nil || len(got.Interruptions) != 1 {
				t.Fatalf("Parse = %+v, %v; want one interruption", got, err)
			}
			if d := got.Interruptions[0].Deadline; !d.Equal(want) {
				t.Errorf("deadline = %s, want %s", d, want)
			}
		})
	}
}
