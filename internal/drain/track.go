package drain

import "time"

// left reports whether t has left the node.
func (r *run) left(t *target) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return t.isGone
}

// blocked reports whether a disruption budget refused t's last eviction.
func (r *run) blocked(t *target) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return t.state == stateBlocked
}

// settle records t's new state and reports whether it changed.
func (r *run) settle(t *target, s state, detail string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t.detail = detail
	if t.state == s {
		return false
	}
	t.state = s
	r.broadcast()
	return true
}

// accepted records that t was evicted or deleted with grace gs (-1: its
// own), so it is expected gone by then. The watch refines the time from
// the pod's deletionTimestamp.
func (r *run) accepted(t *target, s state, gs int64) {
	if gs < 0 {
		gs = t.grace
	}
	ends := r.d.now().Add(time.Duration(gs) * time.Second)
	r.mu.Lock()
	defer r.mu.Unlock()
	t.state, t.detail = s, ""
	if t.ends.IsZero() || ends.Before(t.ends) {
		t.ends = ends
	}
	r.broadcast()
}

// note records the last transient error for t.
func (r *run) note(t *target, detail string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t.detail = detail
}

// refused counts a budget's refusal of t.
func (r *run) refused(t *target) {
	now := r.d.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if t.refusals == 0 {
		t.refusedFirst = now
	}
	t.refusedLast = now
	t.refusals++
}
