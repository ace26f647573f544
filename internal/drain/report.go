package drain

import (
	"cmp"
	"slices"
)

// report summarises the targets and the skipped pods.
func (r *run) report() Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.d.now()
	rep := Report{Node: r.req.Node, Skipped: slices.Clone(r.skipped)}
	for _, t := range r.targets {
		if t.refusals > 0 {
			rep.Blocks = append(rep.Blocks, Block{Pod: t.key, Budget: t.budget, First: t.refusedFirst, Last: t.refusedLast,
				Refusals: t.refusals, Evicted: t.state != stateBlocked})
		}
		leaving := func() {
			switch {
			case t.isGone:
			case r.stuck(t, now):
				rep.Stuck = append(rep.Stuck, t.key)
			default:
				rep.Terminating = append(rep.Terminating, t.key)
			}
		}
		switch {
		case t.state == stateEvicted:
			rep.Evicted = append(rep.Evicted, t.key)
			leaving()
		case t.state == stateDeleted:
			rep.DeletedAtDeadline = append(rep.DeletedAtDeadline, t.key)
			leaving()
		case t.state == stateGranted:
			rep.FinishedGrants = append(rep.FinishedGrants, t.key)
			leaving()
		case t.isGone:
		case t.state == stateWaiting:
			leaving()
		case t.state == stateBlocked:
			rep.BlockedByPDB = append(rep.BlockedByPDB, t.key)
		case t.protected:
			rep.Protected = append(rep.Protected, t.key)
		case t.state == stateFailed:
			rep.Failed = append(rep.Failed, Skipped{Pod: t.key, Reason: t.detail})
		default:
			// Not evicted yet, whether or not a transient error was met:
			// the next Run retries it.
			rep.Pending = append(rep.Pending, t.key)
		}
	}
	for _, l := range [][]string{rep.Evicted, rep.DeletedAtDeadline, rep.FinishedGrants, rep.Terminating, rep.Stuck, rep.BlockedByPDB, rep.Pending, rep.Protected} {
		slices.Sort(l)
	}
	bySkippedPod := func(a, b Skipped) int { return cmp.Compare(a.Pod, b.Pod) }
	slices.SortFunc(rep.Failed, bySkippedPod)
	slices.SortFunc(rep.Skipped, bySkippedPod)
	slices.SortFunc(rep.Blocks, func(a, b Block) int { return cmp.Compare(a.Pod, b.Pod) })
	rep.Done = len(rep.Terminating)+len(rep.BlockedByPDB)+len(rep.Pending)+len(rep.Failed)+len(rep.Protected) == 0
	return rep
}
