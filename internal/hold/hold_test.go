package hold

import (
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
)

var at = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)

func stamp(d time.Duration) string { return Stamp(at.Add(d)) }

// A notice of the same threat refreshes its hold and keeps when and by
// whom it was taken; another threat's notice adds a hold and never
// rewrites one; an older notice changes nothing.
func TestWith(t *testing.T) {
	spot := Hold{Kind: "spot-interruption", ID: "e1", Time: stamp(0), Deadline: stamp(2 * time.Minute), Since: stamp(0), By: "a"}
	set, changed := Set(nil).With(spot)
	if !changed || len(set) != 1 {
		t.Fatalf("first hold: %v, changed %v", set, changed)
	}
	again := spot
	again.Since, again.By = stamp(time.Minute), "b"
	if got, changed := set.With(again); changed || got[0] != spot {
		t.Errorf("a duplicate changed the hold: %+v (changed %v)", got[0], changed)
	}
	later := again
	later.Deadline, later.Time = stamp(5*time.Minute), stamp(time.Second)
	got, _ := set.With(later)
	if got[0].Deadline != spot.Deadline || got[0].Time != later.Time || got[0].By != "a" || got[0].Since != spot.Since {
		t.Errorf("refresh: %+v, want the earlier deadline, the later time, the first taker", got[0])
	}
	ends, _ := got.With(Hold{Kind: "spot-interruption", ID: "e1", End: stamp(time.Hour)})
	if ends, _ = ends.With(Hold{Kind: "spot-interruption", ID: "e1", End: stamp(time.Minute)}); ends[0].End != stamp(time.Hour) {
		t.Errorf("end %s, want the later of the two notices'", ends[0].End)
	}
	if ends[0].Deadline != spot.Deadline {
		t.Errorf("a notice without a deadline changed the hold's to %q", ends[0].Deadline)
	}
	retire := Hold{Kind: "scheduled-change", ID: "arn", Time: stamp(-time.Hour), Since: stamp(0)}
	got, _ = got.With(retire)
	if len(got) != 2 || got[0].Kind != "spot-interruption" || !got.Has(retire.Key()) {
		t.Errorf("another threat: %v, want both held", got)
	}
	if n, ok := got.Newest(); !ok || n.Key() != spot.Key() {
		t.Errorf("newest = %v, want the Spot warning", n)
	}
	dated := retire
	dated.Deadline = stamp(24 * time.Hour)
	if got, _ = got.With(dated); got[1].Deadline != dated.Deadline {
		t.Errorf("a hold without a deadline refreshed with one: deadline %q", got[1].Deadline)
	}
}

// Past Max, the new hold is kept and the oldest threat of the others makes room.
func TestWithPastMax(t *testing.T) {
	var set Set
	for i := range Max + 1 {
		set, _ = set.With(Hold{Kind: "k", ID: string(rune('a' + i)), Time: stamp(time.Duration(i) * time.Minute)})
	}
	if len(set) != Max || set.Has(Key{"k", string(rune('a'))}) || !set.Has(Key{"k", string(rune('a' + Max))}) {
		t.Errorf("past Max: %v, want the oldest threat (the first) dropped and the new one kept", set.Keys())
	}
}

// A give-back ends the holds it matches and only those; a restore no
// later than a threat leaves that threat's hold with why; the zero Ends
// ends every hold.
func TestSplit(t *testing.T) {
	set := Set{
		{Kind: "state-change", ID: "s1", Time: Precise(at)},
		{Kind: "spot-interruption", ID: "e1", Time: Precise(at.Add(time.Minute))},
		{Kind: "asg-lifecycle", ID: "tok", Time: Precise(at), By: "d1"},
	}
	for _, tc := range []struct {
		name      string
		e         Ends
		ended     string
		overtaken bool
	}{
		{"every hold", Ends{}, "state-change/s1, spot-interruption/e1, asg-lifecycle/tok", false},
		{"kinds, before a later threat", Ends{Kinds: []string{"state-change", "spot-interruption"}, Before: at.Add(30 * time.Second)},
			"state-change/s1", true},
		{"by another delivery", Ends{Kinds: []string{"asg-lifecycle"}, By: "d2"}, "no hold", false},
		{"by its delivery", Ends{Kinds: []string{"asg-lifecycle"}, By: "d1"}, "asg-lifecycle/tok", false},
		{"keys", Ends{Keys: []Key{{"spot-interruption", "e1"}}}, "spot-interruption/e1", false},
		{"id", Ends{ID: "e2"}, "no hold", false},
	} {
		ended, kept, why := set.Split(tc.e)
		if ended.String() != tc.ended || len(ended)+len(kept) != len(set) || (why != "") != tc.overtaken {
			t.Errorf("%s: ended %s, kept %s, overtaken %q; want ended %s", tc.name, ended, kept, why, tc.ended)
		}
	}
}

// Parse reads what Encode writes; the empty set is no annotation.
func TestParseEncode(t *testing.T) {
	set := Set{{Kind: "spot-interruption", ID: "e1", Time: Precise(at), Since: stamp(0), By: "x"}}
	got, err := Parse(set.Encode())
	if err != nil || len(got) != 1 || got[0] != set[0] {
		t.Errorf("round trip: %v, %v", got, err)
	}
	if Set(nil).Encode() != "" {
		t.Error("the empty set encodes to a value")
	}
	for _, bad := range []string{"{", `[{"id":"x"}]`} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// An earlier release's single-hold marks read as a set of one, ordered by
// the first cordon when no threat time was kept.
func TestLegacy(t *testing.T) {
	if Legacy("", "e", "", "", "", "") != nil {
		t.Error("no kind: a hold")
	}
	got := Legacy("spot-interruption", "e1", "", stamp(2*time.Minute), "", stamp(0))
	if len(got) != 1 || got[0].Time != stamp(0) || got[0].Deadline != stamp(2*time.Minute) {
		t.Errorf("legacy: %+v", got)
	}
}

// A lifecycle action's hold is named by its token, so both of AWS's
// deliveries of one action (different event ids) refresh one hold.
func TestOfLifecycleByToken(t *testing.T) {
	lc := &event.Lifecycle{ASG: "g", Hook: "h", Token: "tok-1"}
	a := Of(event.Interruption{Kind: event.KindASGLifecycle, EventID: "eventbridge-id", Lifecycle: lc, Time: at}, "d", at)
	b := Of(event.Interruption{Kind: event.KindASGLifecycle, EventID: "", Lifecycle: lc, Time: at}, "e", at)
	if a.Key() != b.Key() || a.ID != "tok-1" || !strings.HasPrefix(a.Time, "2026-12-06T10:00:00") {
		t.Errorf("keys %v and %v, want one hold named by the token", a.Key(), b.Key())
	}
}
