package docs

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// step is one numbered step of migrating-from-nth.md's cutover or
// rollback, as the rehearsal plays it: what it changes, with notices
// arriving before, between and after its changes.
type step struct {
	title string
	do    func(w *world)
}

// cutover is the guide's cutover, in its order.
var cutover = []step{
	{"Deploy Drainpipe in dry run beside NTH", func(w *world) {
		w.deploy(true)
		w.notices("deploy in dry run")
	}},
	{"Compare for a few days", func(w *world) { w.notices("compare") }},
	{"Switch Drainpipe to acting, NTH still running", func(w *world) {
		w.deploy(false) // both act: the overlap
		w.notices("switch")
	}},
	{"Re-point lifecycle hooks that notify NTH's queue, scale-in suspended", func(w *world) {
		w.repoint("eventbridge")
	}},
	{"Stop NTH", func(w *world) {
		w.nth.stop()
		w.nth, w.nthRules = nil, false // scaled to 0, its rules disabled
		w.notices("stop NTH")
	}},
	{"Soak", func(w *world) { w.notices("soak") }},
	{"Remove NTH's rules, queue and role", func(w *world) {
		w.nthSaved = true // saved first
		w.nthQueue, w.nthRules = "", false
		w.notices("remove NTH's resources")
	}},
	{"Remove NTH's marks", func(w *world) { w.notices("remove marks") }},
}

// rollback is the guide's rollback, in its order.
var rollback = []step{
	{"Restore NTH's queue and rules", func(w *world) {
		if w.nthQueue == "" {
			if !w.nthSaved {
				w.t.Fatal("NTH's queue is gone and nothing was saved to restore it from")
			}
			w.nthQueue = w.createQueue("nth")
		}
		w.nthRules = true
		w.notices("restore NTH's queue and rules")
	}},
	{"Start NTH", func(w *world) {
		waiting := w.waiting(w.nthQueue) // sent since its rules came back
		w.nth = w.startNTH()
		w.await(waiting)
		w.notices("start NTH")
	}},
	{"Point the hooks back at NTH's queue, scale-in suspended", func(w *world) {
		w.repoint("nth-queue")
	}},
	{"Prove NTH receives", func(w *world) {
		w.proveNTH()
		w.notices("prove NTH receives")
	}},
	{"Put Drainpipe back in dry run", func(w *world) {
		w.deploy(true)
		w.notices("dry run again")
	}},
}

// TestCutoverLosesNoNotice plays the cutover, then the rollback, from the
// soak (NTH's resources kept) and from after the clean-up: a Spot warning
// and a scale-in arriving at every step, and between the changes of a
// step, each reaches a handler that acts on it.
func TestCutoverLosesNoNotice(t *testing.T) {
	soak := slices.IndexFunc(cutover, func(s step) bool { return s.title == "Soak" })
	for name, upTo := range map[string]int{"during the soak": soak + 1, "after the clean-up": len(cutover)} {
		t.Run("rollback "+name, func(t *testing.T) {
			w := newWorld(t)
			for _, s := range append(slices.Clone(cutover[:upTo]), rollback...) {
				s.do(w)
			}
			if len(w.lost) > 0 {
				t.Errorf("notices no handler acted on:\n%s", strings.Join(w.lost, "\n"))
			}
			if w.scaleInSeen == 0 {
				t.Error("no scale-in was rehearsed")
			}
		})
	}
}

// TestRehearsalSeesAGap plays the order that stops NTH before Drainpipe
// acts, recreates hooks while scale-in runs and deletes NTH's queue before
// a rollback: the rehearsal must report the notices lost in each window.
func TestRehearsalSeesAGap(t *testing.T) {
	w := newWorld(t)
	w.deploy(true)
	w.nth.stop()
	w.nth = nil
	w.notices("NTH stopped, Drainpipe in dry run")
	w.deploy(false)
	w.hookTarget = ""
	w.notices("hook recreated, scale-in running")
	w.hookTarget = "eventbridge"
	w.nthQueue, w.nthRules = "", false
	w.nth = w.startNTH() // the chart holds no queue
	w.deploy(true)
	w.notices("NTH reinstalled without its queue, Drainpipe in dry run")
	want := []string{
		"NTH stopped, Drainpipe in dry run: i-00000000000000001", "NTH stopped, Drainpipe in dry run: i-00000000000000002",
		"hook recreated, scale-in running: i-00000000000000004",
		"NTH reinstalled without its queue, Drainpipe in dry run: i-00000000000000005",
		"NTH reinstalled without its queue, Drainpipe in dry run: i-00000000000000006",
	}
	if diff := cmp.Diff(want, w.lost); diff != "" {
		t.Errorf("notices lost (-want +got):\n%s", diff)
	}
}

// guideStepRE is a numbered step's bold title.
var guideStepRE = regexp.MustCompile(`(?m)^\d+\. \*\*([^*]+)\*\*`)

// TestGuideFollowsTheRehearsal keeps the guide's steps to the rehearsed
// ones: a step added, dropped or moved there fails here until the
// rehearsal plays it.
func TestGuideFollowsTheRehearsal(t *testing.T) {
	doc, err := os.ReadFile("migrating-from-nth.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range []struct {
		heading string
		steps   []step
	}{{"## Cutover", cutover}, {"## Rollback", rollback}} {
		_, body, ok := strings.Cut(string(doc), "\n"+sec.heading+"\n")
		if !ok {
			t.Errorf("migrating-from-nth.md has no %q section", sec.heading)
			continue
		}
		body, _, _ = strings.Cut(body, "\n## ")
		var got, want []string
		for _, m := range guideStepRE.FindAllStringSubmatch(body, -1) {
			got = append(got, strings.TrimSuffix(m[1], "."))
		}
		for _, s := range sec.steps {
			want = append(want, s.title)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the guide's steps (-rehearsed +guide):\n%s", sec.heading, diff)
		}
	}
}
