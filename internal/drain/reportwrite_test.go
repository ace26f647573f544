package drain

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// nodePatches is a clientset whose node patches get answer's error for
// the nth patch (from 1), when not nil, and keep each one's deadline.
type nodePatches struct {
	kubernetes.Interface
	answer    func(n int) error
	deadlines []time.Time
}

func (c *nodePatches) CoreV1() corev1client.CoreV1Interface {
	return patchCore{c.Interface.CoreV1(), c}
}

type patchCore struct {
	corev1client.CoreV1Interface
	c *nodePatches
}

func (p patchCore) Nodes() corev1client.NodeInterface {
	return patchNodes{p.CoreV1Interface.Nodes(), p.c}
}

type patchNodes struct {
	corev1client.NodeInterface
	c *nodePatches
}

func (p patchNodes) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*corev1.Node, error) {
	dl, _ := ctx.Deadline()
	p.c.deadlines = append(p.c.deadlines, dl)
	if err := p.c.answer(len(p.c.deadlines)); err != nil {
		return nil, err
	}
	return p.NodeInterface.Patch(ctx, name, pt, data, opts, sub...)
}

// The report's write has until ReportBy (DefaultReportTime when none):
// the first attempt half the time left, a second one, after a failure,
// the rest; none when no time is left. Two failures lose the report.
func TestWriteReportTriesTwiceByReportBy(t *testing.T) {
	slow := apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0)
	failing := func(failures int) func(int) error {
		return func(n int) error {
			if n <= failures {
				return slow
			}
			return nil
		}
	}
	tests := []struct {
		name    string
		by      time.Duration // ReportBy from now; 0: none
		none    bool          // ReportBy is now
		answer  func(int) error
		wantErr bool
		want    []time.Duration // each attempt's deadline, from now
	}{
		{"written at once", 10 * time.Second, false, failing(0), false, []time.Duration{5 * time.Second}},
		{"written at the second attempt", 10 * time.Second, false, failing(1), false, []time.Duration{5 * time.Second, 10 * time.Second}},
		{"both attempts fail", 10 * time.Second, false, failing(2), true, []time.Duration{5 * time.Second, 10 * time.Second}},
		{"no ReportBy", 0, false, failing(0), false, []time.Duration{DefaultReportTime / 2}},
		{"no time left", 0, true, failing(0), true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				now := time.Now() // the bubble's clock stands still while the writes run
				client := &nodePatches{Interface: fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}), answer: tt.answer}
				req := Request{Node: "n1"}
				if tt.by > 0 {
					req.ReportBy = now.Add(tt.by)
				}
				if tt.none {
					req.ReportBy = now
				}
				err := New(client, DefaultConfig(), nil).writeReport(t.Context(), req, Summary{Kind: "spot-interruption", State: "done"})
				if (err != nil) != tt.wantErr {
					t.Errorf("writeReport error = %v, want an error: %v", err, tt.wantErr)
				}
				if tt.none && !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("writeReport with no time left: %v, want a deadline exceeded", err)
				}
				var got []time.Duration
				for _, dl := range client.deadlines {
					got = append(got, dl.Sub(now))
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("attempts' deadlines from now (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// A Run that did nothing does not rewrite a report saying the same (the
// same state of the same event); any change, or anything done, is written.
func TestWriteSummarySkipsARepeatedReport(t *testing.T) {
	req := Request{Node: "n1", Kind: "spot-interruption", EventID: "e1"}
	prev := Summary{Kind: "spot-interruption", EventID: "e1", State: "draining", Runs: 1,
		Started: time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)}
	tests := []struct {
		name  string
		prev  func(Summary) Summary
		rep   Report
		acted bool
		write bool
	}{
		{"same state", func(s Summary) Summary { return s }, Report{}, false, false},
		{"same state, acted", func(s Summary) Summary { return s }, Report{}, true, true},
		{"now done", func(s Summary) Summary { return s }, Report{Done: true}, false, true},
		{"another event", func(s Summary) Summary { s.EventID = "e0"; return s }, Report{}, false, true},
		{"another kind", func(s Summary) Summary { s.Kind = "rebalance-recommendation"; return s }, Report{}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
			p := tt.prev(prev)
			got, err := New(client, DefaultConfig(), nil).writeSummary(t.Context(), req, tt.rep, p, tt.acted)
			if err != nil {
				t.Fatal(err)
			}
			node, err := client.CoreV1().Nodes().Get(t.Context(), "n1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			written, ok := ReadSummary(node)
			if ok != tt.write {
				t.Fatalf("report written: %v, want %v", ok, tt.write)
			}
			want := p
			if tt.write {
				want = written
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("summary returned (-want +got):\n%s", diff)
			}
		})
	}
}
