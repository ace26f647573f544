// Package nodemap finds the Kubernetes node running on an EC2 instance.
package nodemap

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/instance"
)

// ErrNotFound means no node runs on the instance (never joined, or gone).
var ErrNotFound = errors.New("node not found")

// pageSize bounds one LIST of the fallback search.
const pageSize = 500

// Find returns the name of the node running on inst.
//
// EKS names nodes after the instance's private DNS name, so it first GETs
// that name (then its short form and the instance ID, the names custom
// AMIs and EKS Auto Mode use) and accepts a node only when its
// spec.providerID (aws:///<zone>/<instance-id>) names the instance: a
// private DNS name is only an IP address, which EC2 reuses. When no
// candidate name fits (custom hostnames), it lists nodes page by page
// and matches the providerID. It returns ErrNotFound (wrapped) when no
// node runs on the instance.
func Find(ctx context.Context, client kubernetes.Interface, inst instance.Instance) (string, error) {
	node, err := find(ctx, client, inst, pageSize)
	if err != nil {
		return "", err
	}
	return node.Name, nil
}

// Node is Find returning the node as read: a caller that needs the node's
// labels, taints or annotations gets them with no further request (one
// GET for an EKS-named node).
func Node(ctx context.Context, client kubernetes.Interface, inst instance.Instance) (*corev1.Node, error) {
	return find(ctx, client, inst, pageSize)
}

func find(ctx context.Context, client kubernetes.Interface, inst instance.Instance, limit int64) (*corev1.Node, error) {
	if inst.ID == "" {
		return nil, errors.New("finding node: empty instance ID")
	}
	suffix := "/" + inst.ID
	var unverified *corev1.Node // a node with the DNS name but no providerID yet
	for _, name := range candidates(inst) {
		node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("getting node %s: %w", name, err)
		}
		if strings.HasSuffix(node.Spec.ProviderID, suffix) {
			return node, nil
		}
		if node.Spec.ProviderID == "" && name == inst.PrivateDNSName && unverified == nil {
			unverified = node
		}
	}
	node, err := byProviderID(ctx, client, suffix, limit)
	if err != nil {
		return nil, fmt.Errorf("finding node for instance %s: %w", inst.ID, err)
	}
	if node == nil {
		node = unverified // the cloud controller has not set its providerID yet
	}
	if node == nil {
		return nil, fmt.Errorf("finding node for instance %s: %w", inst.ID, ErrNotFound)
	}
	return node, nil
}

// candidates are the names a node on inst may have, most likely first.
func candidates(inst instance.Instance) []string {
	var out []string
	add := func(s string) {
		for _, v := range out {
			if v == s {
				return
			}
		}
		if s != "" {
			out = append(out, s)
		}
	}
	add(inst.PrivateDNSName)
	short, _, _ := strings.Cut(inst.PrivateDNSName, ".")
	add(short)
	add(inst.ID)
	return out
}

// byProviderID lists nodes in pages and returns the one whose providerID
// ends in suffix, or "" when none does.
func byProviderID(ctx context.Context, client kubernetes.Interface, suffix string, limit int64) (*corev1.Node, error) {
	opts := metav1.ListOptions{Limit: limit}
	for {
		list, err := client.CoreV1().Nodes().List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("listing nodes: %w", err)
		}
		if node := match(list.Items, suffix); node != nil {
			return node, nil
		}
		if list.Continue == "" {
			return nil, nil
		}
		opts.Continue = list.Continue
	}
}

func match(nodes []corev1.Node, suffix string) *corev1.Node {
	for i := range nodes {
		if strings.HasSuffix(nodes[i].Spec.ProviderID, suffix) {
			return &nodes[i]
		}
	}
	return nil
}
