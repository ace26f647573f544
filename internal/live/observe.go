package live

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/kevents"
	"github.com/drainpipe/drainpipe/internal/metrics"
	"github.com/drainpipe/drainpipe/internal/notify"
	"github.com/drainpipe/drainpipe/internal/notify/webhook"
	"github.com/drainpipe/drainpipe/internal/pipeline"
)

// observers are the pipeline's observability pieces, on by default:
// metrics (EMF on stdout), Kubernetes events, and the webhook when one is
// configured. The caller's Options.Recorder and Options.OnDrainEvent are
// kept and called first.
type observers struct {
	recorder   pipeline.Recorder
	kubeEvents bool
	onEvent    func(drain.Event)
	metrics    *metrics.Emitter
	log        *slog.Logger
}

func newObservers(cfg config.Config, awsCfg aws.Config, log *slog.Logger, opts Options) (*observers, error) {
	o := &observers{kubeEvents: cfg.KubeEvents, onEvent: opts.OnDrainEvent, metrics: opts.Metrics, log: log}
	if o.metrics == nil && cfg.Metrics {
		o.metrics = metrics.New(os.Stdout).WithStack(cfg.MetricsStack)
	}
	var recs recorders
	if opts.Recorder != nil {
		recs = append(recs, opts.Recorder)
	}
	if o.metrics != nil {
		recs = append(recs, o.metrics)
	}
	if cfg.WebhookSecretARN != "" {
		secret, err := notify.NewSecret(cfg.WebhookSecretARN, awsCfg)
		if err != nil {
			return nil, err
		}
		nopts := notify.Options{Log: log, OnError: o.countError(metrics.ClassWebhook), Headers: cfg.WebhookHeaders}
		if cfg.WebhookTemplate != "" {
			if nopts.Template, err = webhook.ParseTemplate(cfg.WebhookTemplate); err != nil {
				return nil, fmt.Errorf("%sWEBHOOK_TEMPLATE: %w", config.Prefix, err)
			}
		}
		recs = append(recs, notify.New(secret, nopts))
	}
	o.recorder = recs
	return o, nil
}

func (o *observers) countError(class string) func(error) {
	return func(error) {
		if o.metrics != nil {
			o.metrics.Error(class)
		}
	}
}

// drainer builds one Act's drainer on client: the engine, wrapped to write
// Kubernetes events when they are on.
func (o *observers) drainer(client kubernetes.Interface, dcfg drain.Config, log *slog.Logger) pipeline.Drainer {
	if !o.kubeEvents {
		dcfg.OnEvent = o.onEvent
		return drain.New(client, dcfg, log)
	}
	rec := kevents.New(client, kevents.Options{Log: log, OnError: o.countError(metrics.ClassKubeEvent), Pace: dcfg.Pace})
	caller := o.onEvent
	dcfg.OnEvent = func(e drain.Event) {
		if caller != nil {
			caller(e)
		}
		rec.Observe(e)
	}
	dcfg.Announce = rec.Announce
	return rec.Wrap(drain.New(client, dcfg, log))
}

// recorders fans each observation out to several Recorders in order.
type recorders []pipeline.Recorder

func (rs recorders) RecordTask(t handler.Task, r handler.Result, elapsed time.Duration) {
	for _, rec := range rs {
		rec.RecordTask(t, r, elapsed)
	}
}

func (rs recorders) RecordDrain(cluster string, r drain.Report) {
	for _, rec := range rs {
		rec.RecordDrain(cluster, r)
	}
}

func (rs recorders) RecordHook(op pipeline.HookOp, l event.Lifecycle, alreadyDone bool, err error) {
	for _, rec := range rs {
		rec.RecordHook(op, l, alreadyDone, err)
	}
}

// Flush flushes the recorders that have work in flight (the webhook).
func (rs recorders) Flush(ctx context.Context) {
	for _, rec := range rs {
		if f, ok := rec.(interface{ Flush(context.Context) }); ok {
			f.Flush(ctx)
		}
	}
}
