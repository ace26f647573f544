package pipeline

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/handler"
)

// leftToOthers leaves Auto Mode and Karpenter nodes to their controllers
// only when told to, reading the node when it was not read.
func TestLeftToOthers(t *testing.T) {
	node := func(name string, labels map[string]string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	auto := node("auto", map[string]string{drain.AutoModeLabel: drain.AutoModeCompute})
	karp := node("karp", map[string]string{drain.KarpenterNodePoolLabel: "default"})
	old := node("old", map[string]string{drain.KarpenterProvisionerLabel: "p"})
	plain := node("plain", map[string]string{drain.AutoModeLabel: "ec2"})
	client := fake.NewClientset(auto, karp, old, plain)
	tests := []struct {
		skipAuto, skipKarp bool
		node               string
		want               string
	}{
		{false, false, "auto", ""},
		{true, false, "auto", "EKS Auto Mode node"},
		{false, true, "auto", ""},
		{true, false, "karp", ""},
		{false, true, "karp", `Karpenter (karpenter.sh/nodepool="default")`},
		{false, true, "old", "Karpenter (karpenter.sh/provisioner-name=\"p\")"},
		{true, true, "plain", ""},
	}
	for _, tt := range tests {
		a := &Actor{cfg: Config{SkipAutoMode: tt.skipAuto, SkipKarpenter: tt.skipKarp}}
		for _, read := range []*corev1.Node{nil, map[string]*corev1.Node{"auto": auto, "karp": karp, "old": old, "plain": plain}[tt.node]} {
			why, err := a.leftToOthers(context.Background(), client, tt.node, read)
			if err != nil || (tt.want == "") != (why == "") || !strings.Contains(why, tt.want) {
				t.Errorf("skip auto %v, karpenter %v, node %s (read %v): %q, %v; want %q", tt.skipAuto, tt.skipKarp, tt.node, read != nil, why, err, tt.want)
			}
		}
	}
	a := &Actor{cfg: Config{SkipKarpenter: true}}
	if _, err := a.leftToOthers(context.Background(), client, "absent", nil); err == nil || !strings.Contains(err.Error(), "getting node absent") {
		t.Errorf("a node that cannot be read: %v", err)
	}
}

func TestStatusName(t *testing.T) {
	for s, want := range map[handler.Status]string{handler.StatusDone: "done", handler.StatusIgnored: "ignored",
		handler.StatusRetry: "retry", handler.Status(42): "status(42)"} {
		if got := statusName(s); got != want {
			t.Errorf("statusName(%d) = %q, want %q", int(s), got, want)
		}
	}
}
