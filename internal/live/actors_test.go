package live

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/smithy-go/logging"
	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
	"github.com/drainpipe/drainpipe/internal/metrics"
	"github.com/drainpipe/drainpipe/internal/pipeline"
	"github.com/drainpipe/drainpipe/test/awsfake"
)

// kubeconfig writes a kubeconfig with contexts blue and green, blue
// current, whose servers are never reached.
func kubeconfig(t *testing.T) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	for _, name := range []string{"blue", "green"} {
		cfg.Clusters[name] = &clientcmdapi.Cluster{Server: "https://" + name + ".invalid"}
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "t"}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	cfg.CurrentContext = "blue"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// NewActors builds the pipeline and the sweep without a call to AWS or a
// cluster (a cold start stays fast), in EKS and in local mode.
func TestNewActorsMakesNoCall(t *testing.T) {
	fakeAWS := awsfake.New()
	defer fakeAWS.Close()
	for name, set := range map[string]func(*config.Config, *Options){
		"eks":           func(*config.Config, *Options) {},
		"local":         func(c *config.Config, _ *Options) { c.Kubeconfig = kubeconfig(t) },
		"local context": func(c *config.Config, o *Options) { c.Kubeconfig, o.KubeContext = kubeconfig(t), "green" },
	} {
		cfg := config.Default()
		cfg.Clusters = []string{"prod"}
		cfg.Metrics = false
		var opts Options
		set(&cfg, &opts)
		a, err := NewActors(cfg, fakeAWS.Config(), nil, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if a.Pipeline == nil || a.Sweep == nil {
			t.Errorf("%s: actors %+v", name, a)
		}
	}
	if n := len(fakeAWS.Calls()); n != 0 {
		t.Errorf("%d AWS calls while building, want none", n)
	}
}

func TestNewActorsRefuses(t *testing.T) {
	fakeAWS := awsfake.New()
	defer fakeAWS.Close()
	for name, tt := range map[string]struct {
		set  func(*config.Config, *Options)
		want string
	}{
		"empty cluster name": {func(c *config.Config, _ *Options) { c.Clusters = []string{" "} }, "routing instances"},
		"context without kubeconfig": {func(_ *config.Config, o *Options) { o.KubeContext = "green" },
			`kubeconfig context "green": only a kubeconfig (local mode) has contexts`},
		"unknown context": {func(c *config.Config, o *Options) { c.Kubeconfig, o.KubeContext = kubeconfig(t), "typo" }, `context "typo" not found`},
		"no kubeconfig":   {func(c *config.Config, _ *Options) { c.Kubeconfig = filepath.Join(t.TempDir(), "absent") }, "local mode"},
		"bad webhook ARN": {func(c *config.Config, _ *Options) { c.WebhookSecretARN = "arn:aws:s3:::b" }, "observing"},
		"bad template": {func(c *config.Config, _ *Options) {
			c.WebhookSecretARN = "arn:aws:ssm:us-west-2:1:parameter/x"
			c.WebhookTemplate = "{{ .Nope }}"
		}, config.Prefix + "WEBHOOK_TEMPLATE"},
	} {
		cfg := config.Default()
		cfg.Clusters = []string{"prod"}
		var opts Options
		tt.set(&cfg, &opts)
		if _, err := NewActors(cfg, fakeAWS.Config(), nil, opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: NewActors error %v, want %q", name, err, tt.want)
		}
	}
}

// The pipeline decides by the configuration's settings, some of them
// turned around (a switch to wait becomes one not to).
func TestPipelineConfig(t *testing.T) {
	cfg := config.Default()
	cfg.Clusters = []string{"prod"}
	cfg.MaxReceiveCount, cfg.MaxEventAge, cfg.SafetyMargin = 7, time.Minute, 3*time.Second
	cfg.Hooks.Reserve, cfg.Hooks.HeartbeatCap = 4*time.Second, 9*time.Second
	cfg.Hooks.ASGNames, cfg.Hooks.ASGNamePrefix, cfg.Hooks.HookNames = []string{"g"}, "p-", []string{"h"}
	cfg.Hooks.LaunchWaitReady = false
	cfg.Return.OutOfService, cfg.Return.SkipKarpenter, cfg.Return.HandleAutoMode = true, true, true
	cfg.Return.RebalanceHold = 5 * time.Minute
	want := pipeline.Config{MaxReceiveCount: 7, MaxEventAge: time.Minute, SafetyMargin: 3 * time.Second,
		HookReserve: 4 * time.Second, HeartbeatInterval: 9 * time.Second, ASGNames: []string{"g"}, ASGNamePrefix: "p-",
		HookNames: []string{"h"}, LaunchNoWait: true, OutOfService: true, SkipKarpenter: true, SkipAutoMode: false,
		RebalanceHold: 5 * time.Minute, Clusters: []string{"prod"}}
	if diff := cmp.Diff(want, PipelineConfig(cfg, Options{})); diff != "" {
		t.Errorf("PipelineConfig (-want +got):\n%s", diff)
	}
	cfg.Hooks.LaunchWaitReady, cfg.Return.HandleAutoMode = true, false
	got := PipelineConfig(cfg, Options{})
	if got.DryRun || got.LaunchNoWait || !got.SkipAutoMode {
		t.Errorf("PipelineConfig: dry run %v, launch no-wait %v, skip Auto Mode %v; want false, false, true", got.DryRun, got.LaunchNoWait, got.SkipAutoMode)
	}
	if !PipelineConfig(cfg, Options{DryRun: true}).DryRun {
		t.Error("the caller's dry run is lost")
	}
	cfg.DryRun = true
	if !PipelineConfig(cfg, Options{}).DryRun {
		t.Error("the configuration's dry run is lost")
	}
}

func TestRequiredTag(t *testing.T) {
	for tag, want := range map[config.Tag]string{
		{}:                            "",
		{Key: "team", AnyValue: true}: "team",
		{Key: "team", Value: "a"}:     "team=a",
		{Key: "team"}:                 "team=",
		{Value: "a"}:                  "",
	} {
		if got := requiredTag(tag); got != want {
			t.Errorf("requiredTag(%+v) = %q, want %q", tag, got, want)
		}
	}
}

// One pace per cluster client; none when the rate is off.
func TestPaces(t *testing.T) {
	a, b := fake.NewClientset(), fake.NewClientset()
	p := newPaces(10, 2)
	if p.of(a) == nil || p.of(a) != p.of(a) || p.of(a) == p.of(b) {
		t.Error("want one pace per client, the same on each call")
	}
	for _, rate := range []int{0, -1} {
		if newPaces(rate, 2).of(a) != nil {
			t.Errorf("rate %d: a pace, want none", rate)
		}
	}
	if newPaces(1, 1).of(a) == nil {
		t.Error("rate 1: no pace")
	}
}

// fakeClusters hands out one fake clientset for every cluster.
type fakeClusters struct{ k kubernetes.Interface }

func (f fakeClusters) Client(context.Context, string) (kubernetes.Interface, error) { return f.k, nil }

type noActor struct{}

func (noActor) Act(context.Context, handler.Task) handler.Result { return handler.Result{} }

// A sweep's counts are emitted when metrics are on; its report is the
// message's result.
func TestSweepEmitsItsCounts(t *testing.T) {
	fakeAWS := awsfake.New()
	defer fakeAWS.Close()
	cfg := config.Default()
	cfg.Clusters = []string{"prod"}
	lookup := instance.NewLookup(ec2.NewFromConfig(fakeAWS.Config()), instance.Router{})
	hooks := lifecycle.New(autoscaling.NewFromConfig(fakeAWS.Config()))
	var out bytes.Buffer
	for _, m := range []*metrics.Emitter{metrics.New(&out), nil} {
		s, err := newSweep(cfg, Options{}, fakeClusters{fake.NewClientset()}, lookup, hooks, m, nil, noActor{})
		if err != nil {
			t.Fatal(err)
		}
		if res := s.Sweep(context.Background()); res.Status != handler.StatusDone || !strings.Contains(res.Reason, "0 held nodes checked") {
			t.Errorf("sweep result %+v, want done with nothing checked", res)
		}
	}
	if n := strings.Count(out.String(), `"SweepNodesChecked":0`); n != 1 {
		t.Errorf("metrics %q: %d sweep documents, want one (the sweep without metrics writes none)", out.String(), n)
	}
}

// countError counts a failure by class, and nothing without metrics.
func TestCountError(t *testing.T) {
	var out bytes.Buffer
	o := &observers{metrics: metrics.New(&out)}
	o.countError(metrics.ClassWebhook)(errors.New("x"))
	if !strings.Contains(out.String(), `"class":"webhook"`) {
		t.Errorf("metrics %q, want an error of class webhook", out.String())
	}
	(&observers{}).countError(metrics.ClassWebhook)(errors.New("x")) // no metrics: nothing to count
}

// hookRecorder counts hook calls and flushes.
type hookRecorder struct {
	pipeline.NopRecorder
	hooks, flushes int
}

func (h *hookRecorder) RecordHook(pipeline.HookOp, event.Lifecycle, bool, error) { h.hooks++ }
func (h *hookRecorder) Flush(context.Context)                                    { h.flushes++ }

func TestRecordersFanOut(t *testing.T) {
	a, b := &hookRecorder{}, &hookRecorder{}
	rs := recorders{a, pipeline.NopRecorder{}, b}
	rs.RecordHook(pipeline.HookComplete, event.Lifecycle{}, false, nil)
	rs.RecordTask(handler.Task{}, handler.Result{}, 0)
	rs.RecordDrain("prod", drain.Report{})
	rs.Flush(context.Background())
	if a.hooks != 1 || b.hooks != 1 || a.flushes != 1 || b.flushes != 1 {
		t.Errorf("hooks %d, %d; flushes %d, %d; want one each", a.hooks, b.hooks, a.flushes, b.flushes)
	}
}

// With metrics on and none given, the observers write them (to stdout),
// under the configured stack.
func TestObserversMakeTheirMetrics(t *testing.T) {
	cfg := config.Default()
	cfg.Metrics = true
	fakeAWS := awsfake.New()
	defer fakeAWS.Close()
	obs, err := newObservers(cfg, fakeAWS.Config(), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if obs.metrics == nil {
		t.Error("metrics on, but no emitter")
	}
	if rs := obs.recorder.(recorders); len(rs) != 1 {
		t.Errorf("%d recorders, want the metrics alone", len(rs))
	}
	cfg.WebhookSecretARN = "arn:aws:ssm:us-west-2:111122223333:parameter/x"
	cfg.WebhookTemplate = "{{ .Text }}"
	obs, err = newObservers(cfg, fakeAWS.Config(), nil, Options{Recorder: pipeline.NopRecorder{}})
	if err != nil {
		t.Fatal(err)
	}
	if rs := obs.recorder.(recorders); len(rs) != 3 {
		t.Errorf("%d recorders, want the caller's, the metrics and the webhook", len(rs))
	}
}

// WithSDKLog makes the SDK's lines the log's, from loading on.
func TestWithSDKLog(t *testing.T) {
	var buf bytes.Buffer
	cfg, err := AWSConfig(context.Background(), WithSDKLog(slog.New(slog.NewJSONHandler(&buf, nil))))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger.Logf(logging.Warn, "a warning")
	if !strings.Contains(buf.String(), `"msg":"a warning"`) || !strings.Contains(buf.String(), `"source":"aws-sdk"`) {
		t.Errorf("log %q, want the SDK's warning as a JSON line", buf.String())
	}
}
