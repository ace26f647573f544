// Package hold is a node's set of holds: one per threat that stands to
// its instance (a Spot warning, a scheduled change, a terminate action…),
// each with its kind, id, threat time, deadline and end. A notice adds or
// refreshes its own hold and never rewrites another's; a give-back ends
// the holds it matches, and the node returns to service only when the set
// is empty. The set lives in one node annotation (drain.AnnotationHolds,
// with the node's other marks), written in the same patch as the cordon
// or give-back that changes it; the package does no I/O.
package hold

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Max bounds the set: past it, adding a hold drops the other whose threat
// is oldest (see With). Each kind of threat has one source and an instance
// faces few at once, so eight covers every sequence AWS sends; the
// encoded set stays well under the admission policy's 2,048 characters.
const Max = 8

// timeLayout is the layout of Since: whole seconds, as the node's other
// marks.
const timeLayout = time.RFC3339

// Hold is one threat the node is held for.
type Hold struct {
	// Kind is the interruption kind (event.Kind's value).
	Kind string `json:"kind"`
	// ID names the threat within its kind: a lifecycle action's token
	// (both of AWS's deliveries of one action carry it), else the
	// notice's event id. Empty when the notice had none.
	ID string `json:"id,omitempty"`
	// Time is when AWS announced the threat (RFC 3339, as precise as AWS
	// gave it): a restore dated no later ends nothing.
	Time string `json:"time,omitempty"`
	// Deadline is when the instance goes (RFC 3339); End when the threat
	// is over at the latest (a window's end, a Capacity Block's end).
	Deadline string `json:"deadline,omitempty"`
	End      string `json:"end,omitempty"`
	// Since is when Drainpipe took the hold (RFC 3339); a refresh keeps it.
	Since string `json:"since"`
	// By names the delivery that took the hold, so a delivery that finds
	// its own action over ends only a hold it took (see Match.By).
	By string `json:"by,omitempty"`
}

// Key identifies a hold in its set: a notice of the same threat refreshes
// the hold with its key.
type Key struct{ Kind, ID string }

// Key returns h's key.
func (h Hold) Key() Key { return Key{h.Kind, h.ID} }

// String is the key as `drainpipe nodes` shows it.
func (k Key) String() string {
	if k.ID == "" {
		return k.Kind
	}
	return k.Kind + "/" + k.ID
}

// Set is a node's holds, in the order they were taken.
type Set []Hold

// Parse reads the annotation's value; an empty value is the empty set.
func Parse(s string) (Set, error) {
	if s == "" {
		return nil, nil
	}
	var set Set
	if err := json.Unmarshal([]byte(s), &set); err != nil {
		return nil, fmt.Errorf("reading the holds: %w", err)
	}
	for _, h := range set {
		if h.Kind == "" {
			return nil, errors.New("reading the holds: a hold without a kind")
		}
	}
	return set, nil
}

// Encode is the annotation's value; the empty set encodes to "".
func (s Set) Encode() string {
	if len(s) == 0 {
		return ""
	}
	b, err := json.Marshal(s)
	if err != nil { // strings only: always encodes
		return ""
	}
	return string(b)
}

// Keys lists the set's keys, for logs and reasons.
func (s Set) Keys() []string {
	out := make([]string, 0, len(s))
	for _, h := range s {
		out = append(out, h.Key().String())
	}
	return out
}

// String is the set as a reason names it.
func (s Set) String() string {
	if len(s) == 0 {
		return "no hold"
	}
	return strings.Join(s.Keys(), ", ")
}

// Has reports whether the set holds key.
func (s Set) Has(k Key) bool {
	return slices.ContainsFunc(s, func(h Hold) bool { return h.Key() == k })
}

// Kinds reports whether the set holds any of kinds.
func (s Set) Kinds(kinds ...string) bool {
	return slices.ContainsFunc(s, func(h Hold) bool { return slices.Contains(kinds, h.Kind) })
}

// Newest is the hold with the latest threat time (the last taken among
// equals); ok is false for the empty set.
func (s Set) Newest() (Hold, bool) {
	if len(s) == 0 {
		return Hold{}, false
	}
	best := s[0]
	for _, h := range s[1:] {
		if !parse(h.Time).Before(parse(best.Time)) {
			best = h
		}
	}
	return best, true
}

// With adds h to the set, or refreshes the hold with its key: its Since
// and By stay, an earlier deadline of the same threat stands (a stopped
// instance's drain comes back with a later one each time), and a later
// threat time or end replaces its own. A notice older than the hold it
// refreshes changes nothing. Past Max, the hold with the oldest threat
// time among the others makes room (the notice at hand is always kept).
// changed is false when the set is already so.
func (s Set) With(h Hold) (out Set, changed bool) {
	i := slices.IndexFunc(s, func(o Hold) bool { return o.Key() == h.Key() })
	if i < 0 {
		out = append(slices.Clone(s), h)
		if len(out) > Max {
			at := oldest(out[:len(out)-1])
			out = slices.Delete(out, at, at+1)
		}
		return out, true
	}
	cur := s[i]
	next := cur
	if t := parse(h.Time); !t.IsZero() && t.After(parse(cur.Time)) {
		next.Time = h.Time
	}
	if h.Deadline != "" && (cur.Deadline == "" || parse(h.Deadline).Before(parse(cur.Deadline))) {
		next.Deadline = h.Deadline
	}
	if h.End != "" && parse(h.End).After(parse(cur.End)) {
		next.End = h.End // the later end: a threat is over no earlier than any notice of it said
	}
	if next == cur {
		return s, false
	}
	out = slices.Clone(s)
	out[i] = next
	return out, true
}

// oldest is the index of the hold with the earliest threat time.
func oldest(s Set) int {
	at := 0
	for i, h := range s {
		if parse(h.Time).Before(parse(s[at].Time)) {
			at = i
		}
	}
	return at
}

// parse reads a time the set carries; the zero time when absent or
// unreadable (a hold is never judged by a time it lacks).
func parse(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// Stamp formats t as Since and the deadlines are kept.
func Stamp(t time.Time) string { return t.UTC().Format(timeLayout) }

// Precise formats t as a threat time is kept.
func Precise(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
