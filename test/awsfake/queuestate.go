package awsfake

import (
	"slices"
	"time"
)

// MessageState is the history of one message of a modelled queue, for
// invariants ("no message unaccounted for").
type MessageState struct {
	ID, Body     string
	Copy         int // which copy of ID (QueueOptions.Duplicates), from 0
	SentAt       time.Time
	Receives     []time.Time
	DeletedAt    time.Time // zero while not deleted
	DeadLettered bool      // moved to the dead-letter queue
	InFlight     bool      // received and not yet visible again
}

// QueueMessages returns the state of every message a modelled queue holds
// or held, in send order: each copy of a duplicated message apart.
func (s *Server) QueueMessages(url string) ([]MessageState, error) {
	m, err := s.model(url)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]MessageState, 0, len(m.msgs))
	for _, q := range m.msgs {
		st := q.MessageState
		st.Receives = slices.Clone(q.Receives)
		st.InFlight = q.DeletedAt.IsZero() && !q.DeadLettered && q.visibleAt.After(now)
		out = append(out, st)
	}
	return out, nil
}
