package live

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/metrics"
	"github.com/drainpipe/drainpipe/internal/pipeline"
)

// countingRecorder counts the calls it gets.
type countingRecorder struct {
	pipeline.NopRecorder
	mu            sync.Mutex
	tasks, drains int
}

func (c *countingRecorder) RecordTask(handler.Task, handler.Result, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tasks++
}

func (c *countingRecorder) RecordDrain(string, drain.Report) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drains++
}

// The caller's observers keep working next to metrics and events.
func TestObserversKeepTheCallersHooks(t *testing.T) {
	const node = "ip-10-0-1-23.eu-west-1.compute.internal"
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}})
	var (
		mu   sync.Mutex
		seen []drain.EventType
		out  bytes.Buffer
	)
	caller := &countingRecorder{}
	cfg := config.Default()
	obs, err := newObservers(cfg, aws.Config{}, nil, Options{
		Recorder: caller,
		Metrics:  metrics.New(&out),
		OnDrainEvent: func(e drain.Event) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, e.Type)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	d := obs.drainer(client, drain.DefaultConfig(), nil)
	rep, err := d.Run(context.Background(), drain.Request{Node: node, Kind: "spot-interruption", EventID: "ev-1"})
	if err != nil || !rep.Done {
		t.Fatalf("Run = %+v, %v; want a finished cordon", rep, err)
	}
	obs.recorder.RecordDrain("prod", rep)
	obs.recorder.RecordTask(handler.Task{InstanceID: "i-0abc"}, handler.Result{Status: handler.StatusDone, Node: node}, time.Second)

	if len(seen) == 0 || seen[0] != drain.EventCordoned {
		t.Errorf("caller's OnDrainEvent saw %v, want the cordon", seen)
	}
	if caller.tasks != 1 || caller.drains != 1 {
		t.Errorf("caller's Recorder got %d tasks and %d drains, want 1 and 1", caller.tasks, caller.drains)
	}
	if !strings.Contains(out.String(), `"DrainDuration"`) {
		t.Errorf("no drain metrics written: %q", out.String())
	}
	events, err := client.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(events.Items) != 1 || events.Items[0].Reason != "SpotInterruption" {
		t.Errorf("node events %+v, want one SpotInterruption", events.Items)
	}
}

func TestObserversOff(t *testing.T) {
	cfg := config.Default()
	cfg.KubeEvents, cfg.Metrics = false, false
	obs, err := newObservers(cfg, aws.Config{}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, plain := obs.drainer(fake.NewClientset(), drain.DefaultConfig(), nil).(*drain.Drainer); !plain {
		t.Error("with Kubernetes events off the drainer is still wrapped")
	}
	if rs, _ := obs.recorder.(recorders); len(rs) != 0 {
		t.Errorf("%d recorders with metrics off and no webhook, want none", len(rs))
	}
}

// Every drainer the live actor builds cordons a node never touched unread
// (one request instead of two in a wave's busiest second), Kubernetes
// events on or off: the events' wrapper once hid it.
func TestDrainersCordonUnread(t *testing.T) {
	for _, events := range []bool{true, false} {
		cfg := config.Default()
		cfg.KubeEvents = events
		obs, err := newObservers(cfg, aws.Config{}, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := obs.drainer(fake.NewClientset(), drain.DefaultConfig(), nil).(pipeline.UnreadCordoner); !ok {
			t.Errorf("Kubernetes events %t: the drainer cannot cordon unread", events)
		}
	}
}
