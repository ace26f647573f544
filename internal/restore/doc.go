// Package restore is return to service: it gives back the nodes Drainpipe
// holds once their threat has passed, and settles launch lifecycle actions
// by waiting for the new instance's node to be Ready.
//
// A task whose newest notice is a restore (state pending/running, Health
// notice closed) ends the node's holds that restore is for
// (drain.Uncordon): a hold whose threat was announced at or after the
// restore stays (the restore was overtaken on its way), as does every
// other threat's hold, and the node comes back only when none is left
// (internal/hold). A launch hook in the task is completed as a launch
// after the give-back, ending the warm pool's holds; a terminate hook
// suppresses the restore; a node without Drainpipe's marks costs one GET.
// A rebalance-only cordon is held for its hold by asking for its message
// back then (Result.HoldFor), and its hold ends when it returns: then, or
// earlier when another threat holds the node too.
//
// The pipeline hands it what it needs (Deps): the batch's instance
// lookup, a client per cluster, the node on an instance, the invocation's
// budget and the clock. It imports neither the pipeline nor the handler.
package restore
