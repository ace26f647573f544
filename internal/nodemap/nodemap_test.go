package nodemap

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/drainpipe/drainpipe/internal/instance"
)

const (
	id      = "i-0123456789abcdef0"
	dnsName = "ip-10-0-1-23.us-west-2.compute.internal"
)

func node(name, providerID string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
}

// Unit tests of the decision logic; the sandbox tests prove it against a
// real API server (paging included).
func TestFindDecisions(t *testing.T) {
	inst := instance.Instance{ID: id, PrivateDNSName: dnsName}
	tests := []struct {
		name      string
		nodes     []runtime.Object
		want      string
		wantErr   error
		wantVerbs []string
	}{
		{"by DNS name", []runtime.Object{node(dnsName, "aws:///us-west-2a/"+id)}, dnsName, nil, []string{"get"}},
		{"by short name", []runtime.Object{node("ip-10-0-1-23", "aws:///us-west-2a/"+id)}, "ip-10-0-1-23", nil, []string{"get", "get"}},
		{"by instance ID", []runtime.Object{node(id, "aws:///us-west-2a/"+id)}, id, nil, []string{"get", "get", "get"}},
		{"custom hostname by providerID", []runtime.Object{node("worker-7.corp", "aws:///us-west-2a/"+id)}, "worker-7.corp", nil,
			[]string{"get", "get", "get", "list"}},
		{"DNS name reused by another instance", []runtime.Object{
			node(dnsName, "aws:///us-west-2a/i-0fffffffffffffff0"),
			node("worker-7.corp", "aws:///us-west-2a/"+id),
		}, "worker-7.corp", nil, []string{"get", "get", "get", "list"}},
		{"providerID not set yet", []runtime.Object{node(dnsName, "")}, dnsName, nil, []string{"get", "get", "get", "list"}},
		{"suffix must be a whole ID", []runtime.Object{node("x", "aws:///us-west-2a/xi-0123456789abcdef0")}, "", ErrNotFound,
			[]string{"get", "get", "get", "list"}},
		{"none", nil, "", ErrNotFound, []string{"get", "get", "get", "list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(tt.nodes...)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()

			got, err := Find(ctx, client, inst)

			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Find() error = %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("Find() = %q, want %q", got, tt.want)
			}
			var verbs []string
			for _, a := range client.Actions() {
				verbs = append(verbs, a.GetVerb())
			}
			if diff := cmp.Diff(tt.wantVerbs, verbs); diff != "" {
				t.Errorf("API calls mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFindPropagatesAPIErrors(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("get", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	_, err := Find(context.Background(), client, instance.Instance{ID: id, PrivateDNSName: dnsName})
	if err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("Find() error = %v, want a non-not-found error", err)
	}
}

func TestFindRejectsEmptyID(t *testing.T) {
	if _, err := Find(context.Background(), fake.NewClientset(), instance.Instance{}); err == nil {
		t.Error("Find() error = nil, want one for an empty instance ID")
	}
}
