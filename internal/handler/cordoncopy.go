package handler

// A cordon copy is a record of the cordon queue (Options.CordonQueue):
// the same notice as the work queue's record, sent to a second queue by
// the same rules so that a wave wider than the work queue's event source
// is cordoned at once, while its earlier batches still drain. The actor
// only cordons, taints and holds for it (Task.Copy); the work queue's
// copy does everything else, so a copy is never retried: a record that
// would be ends ignored with its reason.

// copyLeft is added to the reason of a copy that would have been retried.
const copyLeft = "; a cordon copy is not retried: the work queue's copy acts on the notice"

// isCopyBatch reports whether the batch came from the cordon queue.
func (h *Handler) isCopyBatch(queue string) bool {
	return h.opts.CordonQueue != "" && queue == h.opts.CordonQueue
}

// markCopies marks every task of a copy batch.
func markCopies(tasks []Task) {
	for i := range tasks {
		tasks[i].Copy = true
	}
}

// acknowledge turns a copy's retry into ignored, keeping why.
func (r *record) acknowledge() {
	if r.outcome == outcomeRetry {
		r.outcome, r.reason = outcomeIgnored, r.reason+copyLeft
	}
}
