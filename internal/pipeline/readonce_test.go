package pipeline

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// With a NodeGetter (the live wiring's nodemap.Node), the node found is the
// node read: whether it is left to EKS Auto Mode or Karpenter is told from
// its labels as found, with no second read before the cordon (a cold
// environment's every read is a round trip the cordon waits for).
func TestNodeReadOnceBeforeTheCordon(t *testing.T) {
	for _, tt := range []struct {
		name   string
		labels map[string]string
		want   handler.Status
		reason string
	}{
		{"auto mode node", map[string]string{drain.AutoModeLabel: drain.AutoModeCompute}, handler.StatusIgnored, "EKS Auto Mode node"},
		{"karpenter node", map[string]string{drain.KarpenterNodePoolLabel: "default"}, handler.StatusIgnored, "belongs to Karpenter"},
		{"ours", map[string]string{"kubernetes.io/os": "linux"}, handler.StatusDone, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset() // holds no node: a read by name fails
			found := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: tt.labels}}
			nodeOf := func(context.Context, kubernetes.Interface, instance.Instance) (*corev1.Node, error) {
				return found, nil
			}
			d := &fakeDrainer{report: drain.Report{Done: true}}
			r := newRig(t, rigOpts{client: client, nodeOf: nodeOf, drainer: d, cfg: Config{SkipAutoMode: true, SkipKarpenter: true}})
			got := r.actor.Act(context.Background(), task(policy.ActionCordonAndDrain, 1, spot(t0)))
			if got.Status != tt.want || !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("Act = {%s %q}, want %s with %q", statusName(got.Status), got.Reason, statusName(tt.want), tt.reason)
			}
			for _, a := range client.Actions() {
				if a.GetResource().Resource == "nodes" {
					t.Errorf("node read again before the cordon: %s %s", a.GetVerb(), a.GetResource().Resource)
				}
			}
			// The drainer gets the node as found, so its cordon need not
			// read it either.
			for _, req := range d.reqs {
				if req.Read != found {
					t.Errorf("drain request for %s carries read node %v, want the node as found", req.Node, req.Read)
				}
			}
		})
	}
}
