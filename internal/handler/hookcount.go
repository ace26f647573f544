package handler

import "github.com/drainpipe/drainpipe/internal/event"

// noteHook records that a record delivered n times carried lifecycle
// action l for instance id.
func (t *Task) noteHook(l *event.Lifecycle, id string, n int) {
	if l == nil {
		return
	}
	k := *l
	if k.InstanceID == "" {
		k.InstanceID = id
	}
	if t.HookReceiveCounts == nil {
		t.HookReceiveCounts = map[event.Lifecycle]int{}
	}
	t.HookReceiveCounts[k] = max(t.HookReceiveCounts[k], n)
}

// HookReceiveCount is the delivery count of the records that carried l
// (its InstanceID filled in), or the task's when none is known.
func (t Task) HookReceiveCount(l event.Lifecycle) int {
	if n, ok := t.HookReceiveCounts[l]; ok {
		return n
	}
	return t.ReceiveCount
}
