// Package pipeline is the live handler.Actor: for one instance it looks the
// EC2 instance up, finds its Kubernetes node, cordons or drains it within the
// invocation's budget, and heartbeats and completes its Auto Scaling
// lifecycle hooks.
//
// # Budget
//
// The drain runs until the context's deadline less Config.HookReserve, or
// until the instance's own deadline (spot, state change, scheduled change),
// whichever comes first. Unfinished work is reported as Retry; the drain is
// resumable, so the redelivered message continues where this one stopped.
// A drain cut short by the instance's deadline is acknowledged: the instance
// is gone. A scheduled change days away is drained now, in as many
// invocations as it takes. A stopped instance's kubelet is gone, so its
// evicted pods cannot finish terminating: its drain gets a deadline
// Config.StoppedWait (30 s) away and is then acknowledged, leaving the rest to
// the node controller instead of retrying into the dead-letter queue.
//
// # Lifecycle hooks
//
// The Actor keeps its tasks' hooks alive and completes them through a
// lifecycle.Keeper (see internal/lifecycle): Prepare holds every hook of a
// batch as soon as it is planned, heartbeated once the batch's nodes are
// cordoned (at once for a redelivery; Act does, for a task not prepared),
// and a task of hooks alone evicts nothing until that first heartbeat has
// answered (pendingCheck). When the outcome is final the hooks are
// completed; when it is Retry each is decided on its own
// (lifecycle.Keeper.LastChance).
//
// # Outcomes
//
//	step                            result                          status   hooks
//	hooks of groups not served      forged or misrouted             Ignored  left alone
//	hooks not named as served       another tool's hook             Ignored  left alone
//	launch into the warm pool       no node to wait for             Done     completed
//	first heartbeat: not active     action over, nothing else       Ignored  left alone
//	the same, answered after the    node given back before any      Ignored  left alone
//	cordon (hooks only)             eviction (cordon, taint undone)
//	action none                     policy says leave it            Ignored  completed
//	first delivery, too old         stale (Config.MaxEventAge)      Ignored  completed
//	DescribeInstances error         any: access denied (a policy    Retry    pending*
//	                                fix may come; the DLQ bounds
//	                                it), throttling, network
//	instance missing in EC2         not found                       Ignored  completed
//	EC2 state terminated            stale (Config.OutOfService off) Ignored  completed
//	EC2 state terminated, node left out-of-service taint            Done     completed
//	no configured cluster / tag     the router's reason             Ignored  completed
//	hook's group ≠ instance's tag   forged or misrouted             Ignored  left alone
//	claim EC2 contradicts           not Spot, or running again      Ignored  completed
//	SkipKarpenter, Karpenter node   left to Karpenter               Ignored  completed
//	EKS Auto Mode node (default)    left to EKS                     Ignored  completed
//	rebalance only, hold running    HoldFor the rest of the hold    Retry    -
//	EKS client (describe, token)    any error                       Retry    pending*
//	node lookup                     nodemap.ErrNotFound             Done     completed
//	node lookup                     other error (API unreachable)   Retry    pending*
//	drain                           Kubernetes NotFound (node gone) Done     completed
//	drain                           other error                     Retry    pending*
//	drain                           Done                            Done     completed
//	deadline passed before start    cordon and taint only           Done     completed
//	drain                           unfinished, deadline passed     Done     completed
//	drain, EC2 state stopped        StoppedWait passed              Done     completed
//	drain                           unfinished, budget ran out      Retry    pending*
//	group limit                     every slot held until budget    Retry    pending*
//	CompleteLifecycleAction         alreadyDone                     (kept)   counted once
//	CompleteLifecycleAction         any error                       Retry    retried
//	RecordLifecycleActionHeartbeat  any error                       logged   (ignored)
//
// * completed anyway on the last delivery or near the hook's global timeout.
// A retry that leaves hooks pending (or fails to complete them) asks for its
// message back within half their shortest heartbeat timeout
// (handler.Result.RetryWithin): nothing heartbeats them between deliveries.
//
// # Return to service
//
// A task whose newest notice is a restore (state pending/running, Health
// notice closed) gives back the node Drainpipe holds for that threat
// (drain.Uncordon) and takes nothing, unless the node's threat time
// (drain.AnnotationThreatTime) is not before the restore's: then the
// restore was overtaken on its way and ends with that reason. A launch
// hook in the task is completed as a launch after the give-back;
// a terminate hook suppresses the restore; a node without Drainpipe's marks
// costs one GET. A stopped (or terminated) instance's node gets the
// out-of-service taint when Config.OutOfService is set. A rebalance-only
// cordon is held for Config.RebalanceHold by asking for its message back
// then (handler.Result.HoldFor) and given back when it returns, unless an
// interruption has since taken the node or EC2 no longer reports the
// instance running.
//
// # Group limit
//
// With Deps.Groups (DRAINPIPE_GROUP_MAX_DRAINING), a drain without a hard
// deadline (terminate hooks, rebalance drains, scheduled changes an hour
// or more away; see mayWait) first takes a drain slot of its node's group
// (internal/group). While every slot is held the node is cordoned, not
// evicted, and the drain waits within its budget; then the task is Retry,
// its hooks kept alive and pending. A drain on its last delivery, or whose
// hook would be completed before the next one, does not wait. The slot is
// released when the outcome is final and kept across a Retry.
//
// # Dry run
//
// With Config.DryRun the instance is looked up and its node found, and the
// would-be cordon or drain and hook completions are logged; nothing is
// written (no cordon, eviction, heartbeat or completion).
//
// # Batching
//
// Prepare describes all of a batch's instances in one DescribeInstances
// call; Act then uses the prepared answer (once, for up to a minute) and
// describes its instance alone when none was prepared.
package pipeline
