package docs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/live"
	"github.com/drainpipe/drainpipe/internal/metrics"
	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/esm"
)

// The rehearsal's account, group and hook.
const (
	rehearsalAccount = "123456789012"
	rehearsalGroup   = "my-k8s-asg"
	rehearsalHook    = "my-k8s-term-hook"
)

// world is an account in the middle of a move from NTH to Drainpipe, on
// awsfake's queues: NTH's queue, fed by NTH's EventBridge rules and by
// the hook that notifies it, drained by NTH's Deployment; Drainpipe's
// queue, fed by its stack's rules, drained by an event source mapping
// (test/esm) invoking the function's real handler, which in dry run
// deletes what it reads and acts on nothing.
type world struct {
	t    *testing.T
	fake *awsfake.Server

	nthQueue    string // "" once deleted
	nthRules    bool   // NTH's rules exist and are enabled
	nthSaved    bool   // its queue, rules and role are saved for a rollback
	nth         *consumer
	dpQueue     string
	dpRules     bool // the stack is deployed
	dpDryRun    bool // the function's DRAINPIPE_DRY_RUN
	dp          *esm.Mapping
	hookTarget  string   // "nth-queue", "eventbridge" or "" while recreated
	suspended   bool     // the group's Terminate process is suspended
	deferred    []string // scale-ins waiting for the Terminate process
	scaleInSeen int
	seq         int // instances named so far

	mu      sync.Mutex
	acted   map[string][]string // instance -> who acted on its notice
	handled chan string         // one per message a consumer finished
	lost    []string            // notices no handler acts on
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, fake: awsfake.New(), acted: map[string][]string{}, handled: make(chan string, 64), hookTarget: "nth-queue"}
	t.Cleanup(w.fake.Close)
	w.nthQueue = w.createQueue("nth")
	w.nthRules = true
	w.nth = w.startNTH()
	t.Cleanup(func() { w.nth.stop(); w.stopMapping() })
	return w
}

func (w *world) createQueue(name string) string {
	u, err := w.fake.CreateQueue(rehearsalAccount, name, awsfake.QueueOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return u
}

// consumer is NTH's Deployment: it receives from its queue and acts on
// every notice it reads.
type consumer struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (w *world) startNTH() *consumer {
	ctx, cancel := context.WithCancel(context.Background())
	c := &consumer{cancel: cancel, done: make(chan struct{})}
	queue := w.nthQueue
	go func() {
		defer close(c.done)
		for ctx.Err() == nil {
			got, err := w.fake.ReceiveMessages(ctx, queue, 10, time.Second)
			if err != nil {
				return
			}
			for _, r := range got {
				w.act(instanceOf(r.Body), "nth")
				if err := w.fake.DeleteMessage(queue, r.ReceiptHandle); err != nil {
					w.t.Errorf("NTH deleting %s: %v", r.MessageID, err)
				}
				w.handled <- "nth"
			}
		}
	}()
	return c
}

func (c *consumer) stop() {
	if c != nil {
		c.cancel()
		<-c.done
	}
}

func (w *world) act(instance, who string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.acted[instance] = append(w.acted[instance], who)
}

// recorder is the live pipeline, reduced to what the rehearsal checks:
// that it was asked to act.
type recorder struct{ w *world }

func (r recorder) Act(_ context.Context, t handler.Task) handler.Result {
	r.w.act(t.InstanceID, "drainpipe")
	return handler.Result{Status: handler.StatusDone, Reason: "acted"}
}

// deploy (re)deploys the stack: its rules, and a function whose
// configuration says dry run or not. Like a Lambda update, the mapping's
// environments are replaced.
func (w *world) deploy(dryRun bool) {
	if w.dpQueue == "" {
		w.dpQueue = w.createQueue("drainpipe")
	}
	w.dpRules, w.dpDryRun = true, dryRun
	w.stopMapping()
	env := map[string]string{"DRAINPIPE_CLUSTERS": "prod", "DRAINPIPE_DRY_RUN": fmt.Sprint(dryRun), "DRAINPIPE_MAX_EVENT_AGE": "1h"}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		w.t.Fatal(err)
	}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	var actor handler.Actor = handler.DryRun{Log: log}
	if !dryRun {
		actor = recorder{w}
	}
	h := live.NewHandler(cfg, actor, nil, log, metrics.New(io.Discard), nil)
	fn := func(ctx context.Context, payload []byte) ([]byte, error) {
		var ev events.SQSEvent
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, err
		}
		resp, err := h.Handle(ctx, ev)
		for range ev.Records {
			w.handled <- "drainpipe"
		}
		if err != nil {
			return nil, err
		}
		return json.Marshal(resp)
	}
	m, err := esm.Start(esm.Options{Fake: w.fake, QueueURL: w.dpQueue, QueueARN: awsfake.QueueARN(w.dpQueue), MaxConcurrency: 2, Func: fn})
	if err != nil {
		w.t.Fatal(err)
	}
	w.dp = m
}

func (w *world) stopMapping() {
	if w.dp != nil {
		if err := w.dp.Stop(); err != nil {
			w.t.Errorf("stopping the mapping: %v", err)
		}
		w.dp = nil
	}
}
