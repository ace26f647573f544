// Package lifecycle heartbeats and completes Auto Scaling lifecycle actions
// (Client), and keeps the actions of the tasks in progress alive (Keeper).
//
// # Keeper
//
// Prepare holds a planned task's hooks and heartbeats them once its batch
// is ready (its after func); Acquire holds a starting task's, heartbeating
// those not prepared at once. One keep-alive per cadence then heartbeats
// them until their task releases them, queued tasks included; hooks a task
// leaves pending (Linger) are kept alive until the batch's context ends
// (the handler ends it when the batch is answered). The cadence is a third
// of the hook's heartbeat timeout (Timeouts, from DescribeLifecycleHooks),
// at most KeeperConfig.HeartbeatInterval (25 s).
//
// Hooks are completed with CONTINUE whenever the outcome is final (Done
// or Ignored, including "node not found", "not our cluster" and stale
// events: a hook left pending only delays the termination by its timeout,
// and for a terminating hook CONTINUE and ABANDON both let it go). When
// the outcome is Retry each hook is decided on its own (LastChance): it
// stays pending, except when the record that carried it is on its last
// delivery (its receive count ≥ KeeperConfig.MaxReceiveCount) or when the
// action would pass its global timeout (min(100 × heartbeat timeout, 48 h),
// less a quarter of it, at most 1 h; KeeperConfig.MaxHookAge when unknown)
// before the next attempt: then it is completed anyway with an ERROR log
// "completing lifecycle hook before drain finished", and the message is
// still retried so the dead-letter queue shows the unfinished drain. A
// message that leaves hooks pending must come back within half their
// shortest heartbeat timeout (RetryWithin). Duplicate deliveries find the
// action already done (Complete reports alreadyDone; only the first
// completion counts as successful for the recorder).
package lifecycle
