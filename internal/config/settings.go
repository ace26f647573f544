package config

import (
	"slices"
	"strings"

	"github.com/drainpipe/drainpipe/internal/event"
)

// Setting documents one DRAINPIPE_* variable. The table below is the one
// source of the configuration reference (docs/configuration.md is generated
// from it) and of the list of known names (unknown ones are reported);
// TestSettingsMatchLoad fails when Load reads a variable the table lacks, or
// the table lists one Load never reads.
type Setting struct {
	// Name is the variable's name without Prefix.
	Name string
	// Default is the value used when the variable is unset, as Markdown.
	Default string
	// Meaning says what the variable does, as Markdown.
	Meaning string
}

// Settings lists every variable Load reads, in the reference's order.
// When you add a variable to Load, add its row here.
func Settings() []Setting {
	return slices.Insert(settings(), 1, actionSettings()...)
}

// actionSettings are the kinds' DRAINPIPE_ACTION_* rows, from the kinds
// table.
func actionSettings() []Setting {
	var out []Setting
	for _, r := range event.Table() {
		if r.Setting != "" {
			out = append(out, Setting{Name: strings.TrimPrefix(r.Setting, Prefix), Default: "`" + r.DefaultAction + "`", Meaning: r.SettingDoc})
		}
	}
	return out
}

// settings are the rows of every variable but the actions.
func settings() []Setting {
	return []Setting{
		{Name: "DRY_RUN", Default: "`false`", Meaning: "`true`: the function reads but writes nothing: it looks each instance up in EC2 and its node up in the cluster, and logs what it would do to which node (cordon, drain, lifecycle hooks); no cordon, eviction, heartbeat, completion or queue change"},
		{Name: "KARPENTER_NODES", Default: "`handle`", Meaning: "`handle`: nodes labelled `karpenter.sh/nodepool` (or, before Karpenter v1, `karpenter.sh/provisioner-name`) are handled like any node; `skip`: left to Karpenter's own interruption queue (see [Karpenter](policy.md#karpenter))"},
		{Name: "AUTO_MODE_NODES", Default: "`skip`", Meaning: "`skip`: EKS Auto Mode nodes (`eks.amazonaws.com/compute-type=auto`) are left to EKS, which handles their interruptions, with a logged reason; `handle`: handled like any node"},
		{Name: "OUT_OF_SERVICE", Default: "`true`", Meaning: "taint the node `node.kubernetes.io/out-of-service=nodeshutdown:NoExecute` when EC2 reports its instance `stopped` (or `terminated` with the Node left); removed when it runs again (see [Return to service](return-to-service.md))"},
		{Name: "REBALANCE_HOLD", Default: "`30m`", Meaning: "a node cordoned only for a rebalance recommendation is given back this long after its cordon if no interruption followed and the instance still runs; `0` keeps it cordoned; at most `12h`"},
		{Name: "CLUSTERS", Default: "(none)", Meaning: "comma-separated EKS cluster names whose nodes Drainpipe handles"},
		{Name: "CLUSTER_ENDPOINTS", Default: "(none)", Meaning: "`name=https://host[:port],...`: API server URLs used instead of asking EKS (names must be in `DRAINPIPE_CLUSTERS`); plain `http` only to a loopback address (refused at start-up otherwise); an `https` one still asks EKS for the CA unless `DRAINPIPE_CLUSTER_CAS` gives it"},
		{Name: "CLUSTER_CAS", Default: "(none)", Meaning: "`name=<base64 PEM>,...` (as EKS's `certificateAuthority.data`): the CA of a cluster's `https` endpoint override; with it, that cluster needs no `eks:DescribeCluster`"},
		{Name: "REQUIRED_TAG", Default: "(none)", Meaning: "`key` or `key=value`: only instances with this tag are handled"},
		{Name: "MAX_RECEIVE_COUNT", Default: "`5`", Meaning: "the queue's `maxReceiveCount`: the delivery after which a retried message goes to the dead-letter queue (see [retry window](drain.md#retry-window))"},
		{Name: "RETRY_DELAY", Default: "`15s`", Meaning: "how soon a retried record comes back: its visibility timeout is set to this after its first delivery, doubling with each further one (at most `5m`), instead of the queue's (6 \u00d7 the function timeout); `0` leaves it to the queue; `0`\u2013`5m`, whole seconds (rounded up). A record with a pending lifecycle hook comes back within half its heartbeat timeout regardless (see [retry window](drain.md#retry-window))"},
		{Name: "GIVE_WAY_AFTER", Default: "`10s`", Meaning: "a batch whose unfinished records are all on their first delivery asks its queue (`ApproximateNumberOfMessages`) as soon as all its nodes are cordoned, and before any eviction; when messages wait its drains evict for 2 s, then send each pod not yet sent its eviction, and it hands its records back, so that a wave larger than `maxConcurrency` × `batchSize` is cordoned within a second or two instead of after the first batches' drains: the nodes given back stay cordoned, and each drain starts or resumes when its record comes back, 5 s later (10 s for a record whose instance has no deadline, so those racing one are taken first), at the cost of one of their deliveries (never the last: off with `DRAINPIPE_MAX_RECEIVE_COUNT` below 3). A batch asks once. This setting is the longest a batch runs before it first asks when some record never cordons (a launch waiting for its node). `0` turns giving way off; at most `15m` (see [giving way](drain.md#giving-way))"},
		{Name: "MAX_EVENT_AGE", Default: "`1h`", Meaning: "interruptions more than this past their deadline (or their time, when they have none) are ignored as stale on their first delivery (a redelivery resumes the drain; a message sent when its deadline-less event was already this old, such as a dead-letter redrive, counts from its sent time: see docs/operations.md); `0` turns it off; lifecycle hooks are always completed"},
		{Name: "KUBE_QPS", Default: "`200`", Meaning: "Kubernetes client queries per second, per cluster (shared by every drain of that cluster in one container; client-go's default of 5 would throttle a 110-pod drain for over 20 s)"},
		{Name: "KUBE_BURST", Default: "`400`", Meaning: "Kubernetes client burst"},
		{Name: "EVICTION_CONCURRENCY", Default: "`50`", Meaning: "evictions in flight per node"},
		{Name: "RECORD_CONCURRENCY", Default: "`10`", Meaning: "instances handled at once per SQS batch"},
		{Name: "CLUSTER_EVICTION_RATE", Default: "`200`", Meaning: "eviction requests per second one cluster takes from the function: each instance has at least its fair share (this divided by `DRAINPIPE_MAX_CONCURRENCY`), takes this whole rate when it finds no other drain under way, rises while the API server answers fast and halves on a 429 from API Priority and Fairness, a server error or an answer slower than 0.75 s; while other instances' drains are under way (held nodes cordoned in the last five minutes whose drain report is not done) it keeps to the fair share; one instance never sends more than this. Each keeps no more evictions in flight than its current rate sends in 125 ms (at least two; its Kubernetes events have as many of their own). When requests wait, those of drains racing a deadline (Spot, scheduled events, reservations) go first, then pods whose disruption budget must cycle most, then pods a budget refused. Deletes at a deadline are not paced. `0` turns pacing off (see [one pace for the cluster](drain.md#one-pace-for-the-cluster))"},
		{Name: "MAX_CONCURRENCY", Default: "`10`", Meaning: "the event source mapping's maximum concurrency, which the stack sets from its `maxConcurrency`: how many instances may share `DRAINPIPE_CLUSTER_EVICTION_RATE`, which sets each one's fair share (`drainpipe run`: the processes you run at once)"},
		{Name: "TAINT_EFFECT", Default: "`NoSchedule`", Meaning: "effect of the taint put on interrupted nodes: `NoSchedule` or `PreferNoSchedule`; `NoExecute` is refused at start-up (the taint manager would delete every pod at once: no budgets, waves or grace clamp, even on a cordon-only event)"},
		{Name: "EXCLUDE_FROM_LB", Default: "`true`", Meaning: "label interrupted nodes `node.kubernetes.io/exclude-from-external-load-balancers` before draining"},
		{Name: "EVICT_UNMANAGED", Default: "`true`", Meaning: "also evict pods that no controller manages (they are not recreated elsewhere)"},
		{Name: "DEADLINE_RESERVE", Default: "`10s`", Meaning: "kept back from the function's timeout: work stops by then and unfinished records are retried"},
		{Name: "HOOK_RESERVE", Default: "`5s`", Meaning: "kept back from each task's time to complete its lifecycle hooks (retried within it): the drain stops this long before the deadline reserve; at least `1s`"},
		{Name: "HEARTBEAT_CAP", Default: "`25s`", Meaning: "longest interval between a hook's heartbeats (see [lifecycle hooks](lifecycle-hooks.md#lifecycle-hooks-on-an-existing-asg)); `1s`\u2013`25s`"},
		{Name: "ASG_NAMES", Default: "(none; set by the stack)", Meaning: "comma-separated Auto Scaling groups whose lifecycle hooks are served; hooks of other groups, or naming a group the instance's `aws:autoscaling:groupName` tag does not, are left alone (never heartbeated nor completed). With this and the prefix both unset, every group is served"},
		{Name: "ASG_NAME_PREFIX", Default: "(none; set by the stack)", Meaning: "groups whose name starts with this are served too"},
		{Name: "LIFECYCLE_HOOK_NAMES", Default: "(every hook; the stack sets `drainpipe,drainpipe-launch`)", Meaning: "comma-separated lifecycle hook names Drainpipe owns; a served group's other hooks (log shipping, backups) are left to their owner, never heartbeated nor completed, with a logged reason. Unset, every hook of a served group is served"},
		{Name: "LAUNCH_WAIT_READY", Default: "`true`", Meaning: "complete a launch lifecycle action only once the instance's node is Ready in its cluster (or on its record's last delivery); `false` completes it at once (see [launch hooks](lifecycle-hooks.md#launch-hooks))"},
		{Name: "SAFETY_MARGIN", Default: "`10s`", Meaning: "kept back from an instance's deadline (Spot: 2 minutes after the warning): the drain stops waiting that long before the instance goes, and pods' grace periods end by then (with less left, the drain uses what is left)"},
		{Name: "DEADLINE_DELETE", Default: "`true`", Meaning: "with a deadline (Spot, scheduled change, stopped instance), delete pods a disruption budget still blocks 2 \u00d7 `DRAINPIPE_SAFETY_MARGIN` before it, with the grace left, so they get SIGTERM before the instance goes; reported as `deleted_at_deadline`"},
		{Name: "WARN_PODS", Default: "`opted-in`", Meaning: "which pods get the `drainpipe.dev/interruption` annotation (kind, deadline, event id) and a Kubernetes event before the first eviction: `opted-in`, those annotated `drainpipe.dev/notice: \"true\"`; `all`, every pod to be evicted (one more write per pod: a 110-pod drain takes about twice as long); the node always carries it (see [drain features](drain-features.md))"},
		{Name: "POD_GRACE_CAP", Default: "`0`", Meaning: "caps every evicted pod's grace period (aws-node-termination-handler's `podTerminationGracePeriod`), with or without a deadline; a deadline may cut it further. `0`: each pod's own"},
		{Name: "NOTICE_PERIOD", Default: "`0`", Meaning: "pods annotated `drainpipe.dev/notice: \"true\"` are evicted this long after their warning (the `drainpipe.dev/interruption` annotation and event), or as late as their grace period still fits before the instance's deadline when that is sooner; `0` turns it off; at most `1h` (see [drain features](drain-features.md))"},
		{Name: "GROUP_MAX_DRAINING", Default: "(off)", Meaning: "at most this many nodes of one group evict at a time per cluster, for drains without a hard deadline (terminate lifecycle hooks, rebalance drains, scheduled changes an hour or more away): a number (1\u2013100) or a percentage of the group's nodes (`25%`, rounded up, at least 1). A group is the Auto Scaling group, else the Karpenter node pool, else `DRAINPIPE_GROUP_LABEL`. Waiting nodes are cordoned, not evicted; Spot, capacity and stopped-instance drains never wait. Needs the Role in `deploy/rbac.yaml` (see [group-aware drains](drain-features.md#group-aware-drains))"},
		{Name: "GROUP_LABEL", Default: "(none)", Meaning: "node label key whose value names the group of nodes in neither an Auto Scaling group nor a Karpenter node pool; it also counts an Auto Scaling group's nodes for a percentage (else `eks.amazonaws.com/nodegroup` does)"},
		{Name: "GROUP_NAMESPACE", Default: "`drainpipe`", Meaning: "namespace of the drain slot Leases (`coordination.k8s.io/v1`) of `DRAINPIPE_GROUP_MAX_DRAINING`; `deploy/rbac.yaml` creates `drainpipe` and grants leases there only"},
		{Name: "GROUP_LEASE_DURATION", Default: "`2m`", Meaning: "a drain slot outlives its holder's last renewal this long (renewed every third of it while the node drains, kept across a redelivery, released when the drain ends): a killed invocation's slot frees after it; `15s`\u2013`1h`"},
		{Name: "STUCK_POD_TIMEOUT", Default: "`1m`", Meaning: "a pod still terminating this long after its grace ran out (a finalizer, a dead kubelet) is reported `stuck` and no longer waited for"},
		{Name: "KUBECONFIG", Default: "(none)", Meaning: "path of a kubeconfig: local mode, talk to that cluster instead of EKS"},
		{Name: "LOG_LEVEL", Default: "`info`", Meaning: "`debug`, `info`, `warn` or `error`"},
		{Name: "METRICS", Default: "`true`", Meaning: "print CloudWatch embedded-format metrics (namespace `Drainpipe`) on stdout"},
		{Name: "METRICS_STACK", Default: "(none; set by the stack)", Meaning: "value of a `stack` dimension added to every metric (every dimension set, the aggregate included), so two deployments in one account and region keep their metrics, alarms and dashboards apart; the stack sets its own name (`<stack>-<id>` for a construct)"},
		{Name: "SWEEP_RULE", Default: "(none; set by the stack)", Meaning: "ARN (or name) of the EventBridge schedule rule whose `Scheduled Event`s run the sweep (see [Sweep](sweep.md)); scheduled events from any other rule are ignored with a reason, and unset ignores them all"},
		{Name: "CORDON_QUEUE_ARN", Default: "(none; set by the stack)", Meaning: "ARN of the cordon queue, which the stack's rules send a copy of every notice to: a batch from it only cordons, taints and holds its nodes (no eviction, no hook completed, no give-back), acknowledges every record, and ignores a copy sent over 30 s ago, so the nodes of a wave wider than the work queue's batch size times its concurrency are cordoned at once while earlier batches drain; the work queue's copy does the rest (see [One pace for the cluster](drain.md#one-pace-for-the-cluster))"},
		{Name: "SWEEP_MARGIN", Default: "`10m`", Meaning: "the sweep gives a held node back only this long past its threat's end (a Spot or reservation deadline, a rebalance hold, a scheduled event EC2 no longer lists) and past its cordon, its instance still running: the notice that ends the threat normally comes first, and EC2's answers lag its events; `0`\u2013`12h` (see [Sweep](sweep.md))"},
		{Name: "KUBE_EVENTS", Default: "`true`", Meaning: "record Kubernetes events on drained nodes and evicted pods"},
		{Name: "ACCEPT", Default: "(all)", Meaning: "comma-separated message shapes handled: `eventbridge`, `asg-direct` (a lifecycle hook notifying SQS itself), `sns`; others are rejected with the reason. Unset, every shape is read (local runs, `drainpipe explain`); the stack sets exactly what it wires"},
		{Name: "SNS_TOPICS", Default: "(any of the function's account; set by the stack)", Meaning: "comma-separated ARNs of the SNS topics the queue subscribes to: an SNS notification through any other topic, or a topic of another account than the function's, is rejected with the reason; the stack sets its `snsTopicArns`"},
		{Name: "WEBHOOK_SECRET_ARN", Default: "(none)", Meaning: "ARN of a Secrets Manager secret or SSM parameter holding a webhook URL (or `{\"url\": ...}`) that gets a Slack-compatible message per node handled; the URL itself never goes in the environment"},
		{Name: "WEBHOOK_TEMPLATE", Default: "(none: `{\"text\": ...}`)", Meaning: "template giving the webhook's body, `{{ .Field }}` placeholders (no actions) over aws-node-termination-handler's `webhookTemplate` variables (`.EventID`, `.Kind`, `.InstanceID`, `.NodeName`, `.StartTime`, ...) and Drainpipe's (`.Cluster`, `.Status`, `.Reason`, `.Text`); parsed and tried on a sample at start-up (see [webhook templates](operations.md#webhook-templates))"},
		{Name: "WEBHOOK_HEADERS", Default: "`{\"Content-Type\":\"application/json\"}`", Meaning: "JSON object of the webhook request's headers (NTH's `webhookHeaders`); `Content-Type` is `application/json` unless given; `Host`, `Content-Length` and hop-by-hop headers are refused. Values are in the plain environment: no credentials"},
	}
}
