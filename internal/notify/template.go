package notify

import (
	"time"

	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/notify/webhook"
)

// nthMonitor is the monitor aws-node-termination-handler names in its
// queue-processor mode, the one Drainpipe stands in for.
const nthMonitor = "SQS_MONITOR"

// TemplateData is what a template sees for a task. Drainpipe does not
// look up the instance type, zone, provider ID, pods or labels for a
// message: those are empty.
func TemplateData(t handler.Task, r handler.Result, cluster string, elapsed time.Duration) webhook.Data {
	in := first(t)
	text := plainMessage(t, r, cluster, elapsed)
	d := webhook.Data{
		EventID: in.EventID, Kind: string(in.Kind), Monitor: nthMonitor, Description: text,
		State: in.State, NodeName: r.Node, InstanceID: t.InstanceID,
		StartTime: in.Deadline, EndTime: in.End,
		Cluster: cluster, Status: "done", Reason: r.Reason, Text: text,
	}
	if d.StartTime.IsZero() {
		d.StartTime = in.Time
	}
	if in.Lifecycle != nil {
		d.AutoScalingGroupName = in.Lifecycle.ASG
	}
	if r.Status == handler.StatusRetry {
		d.Status = "retry"
	}
	return d
}
