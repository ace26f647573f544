// Package restore is return to service: it gives back the nodes Drainpipe
// holds once their threat has passed, and settles launch lifecycle actions
// by waiting for the new instance's node to be Ready.
//
// A task whose newest notice is a restore (state pending/running, Health
// notice closed) gives back the node Drainpipe holds for that threat
// (drain.Uncordon) and takes nothing, unless the node's threat time
// (drain.AnnotationThreatTime) is not before the restore's: then the
// restore was overtaken on its way and ends with that reason. A launch
// hook in the task is completed as a launch after the give-back;
// a terminate hook suppresses the restore; a node without Drainpipe's marks
// costs one GET. A rebalance-only cordon is held for its hold by asking
// for its message back then (Result.HoldFor) and given back when it
// returns, unless an interruption has since taken the node or EC2 no
// longer reports the instance running.
//
// The pipeline hands it what it needs (Deps): the batch's instance
// lookup, a client per cluster, the node on an instance, the invocation's
// budget and the clock. It imports neither the pipeline nor the handler.
package restore
