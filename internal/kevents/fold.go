package kevents

import (
	"fmt"

	"github.com/drainpipe/drainpipe/internal/drain"
)

// A drain racing a deadline (a Spot warning, a scheduled event, a
// reservation's end) alongside other drains (its batch's, or other
// instances' seen under way: drain.Pace.Crowded) leaves its pods' Evicted
// events out, and its node's closing event names those pods instead. In a
// wave the API server is what the deadlines wait on, and one event per
// evicted pod was 40% of Drainpipe's requests: at 500 nodes, with every
// event written, the Spot nodes' graceful p99 was 103.59 s against 95.16 s
// without them (docs/performance.md). Warnings (a budget's refusal, a
// delete at the deadline, a refused eviction) stay on their pods; a lone
// drain, and a drain that can wait (a terminate hook, which yields to the
// wave's deadlines anyway), keep every pod event.

// fold reports whether the session leaves an Evicted pod event out, and
// counts it.
func (s *session) fold() bool {
	if s.req.Deadline.IsZero() || !s.r.opts.Crowded() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.folded++
	return true
}

// foldedNote is what the node's closing event adds when pod events were
// left out: the evicted pods it names.
func (s *session) foldedNote(rep drain.Report) string {
	s.mu.Lock()
	n := s.folded
	s.mu.Unlock()
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; evicted %s (%d of their own events left out while other drains raced deadlines)", list(rep.Evicted), n)
}
