package pipeline

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// warmingClusters records which clusters' clients were asked for, and
// closes asked at the first.
type warmingClusters struct {
	mu    sync.Mutex
	names []string
	once  sync.Once
	asked chan struct{}
}

func (w *warmingClusters) Client(_ context.Context, name string) (kubernetes.Interface, error) {
	w.mu.Lock()
	w.names = append(w.names, name)
	w.mu.Unlock()
	w.once.Do(func() { close(w.asked) })
	return nil, nil
}

// describeAfterClient answers Describe only once a client was asked for
// (or its guard ran out: then it answers, and the test fails).
type describeAfterClient struct {
	*fakeInstances
	asked   <-chan struct{}
	waited  bool
	timeout time.Duration
}

func (d *describeAfterClient) Describe(ctx context.Context, ids []string) (map[string]instance.Instance, error) {
	select {
	case <-d.asked:
		d.waited = true
	case <-time.After(d.timeout): // a guard, not a measure
	}
	return d.fakeInstances.Describe(ctx, ids)
}

// A cold environment's first cordon waited for DescribeInstances, then
// (in EKS mode) for DescribeCluster to build the cluster's client. A batch
// with work now builds the configured clusters' clients while its
// instances are described; one with nothing to act on builds none, and a
// deployment with more clusters than warmMax builds them as needed.
func TestPrepareBuildsClientsWhileDescribing(t *testing.T) {
	tests := []struct {
		name     string
		clusters []string
		tasks    []handler.Task
		want     bool
	}{
		{"one cluster", []string{"prod"}, batch("i-0000000000000000a"), true},
		{"nothing to act on", []string{"prod"}, []handler.Task{{InstanceID: "i-0000000000000000a", Action: policy.ActionNone}}, false},
		{"warmMax clusters", []string{"a", "b", "c"}, batch("i-0000000000000000a"), true},
		{"more clusters than warmMax", []string{"a", "b", "c", "d"}, batch("i-0000000000000000a"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := &warmingClusters{asked: make(chan struct{})}
			timeout := 10 * time.Second
			if !tt.want {
				timeout = 0 // nothing is asked for: answer at once
			}
			inst := &describeAfterClient{fakeInstances: &fakeInstances{known: map[string]instance.Instance{}}, asked: cl.asked, timeout: timeout}
			a, err := New(Config{Clusters: tt.clusters}, Deps{Instances: inst, Clusters: cl, FindNode: finder(nil, nil),
				NewDrainer: (&fakeDrainer{}).factory, Hooks: &fakeHooks{}, Clock: &fakeClock{now: t0},
				Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			a.Prepare(context.Background(), tt.tasks)
			if tt.want && !inst.waited {
				t.Fatal("the batch's instances were described before any cluster's client was asked for")
			}
			if !tt.want {
				cl.mu.Lock()
				defer cl.mu.Unlock()
				if len(cl.names) > 0 {
					t.Errorf("clients asked for: %v, want none", cl.names)
				}
			}
		})
	}
}
