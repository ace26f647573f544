package drain

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// maxActed bounds the record: an instance sees few scheduled events.
const maxActed = 8

// sameEventSlack is how far apart two sources' start times of one event
// may be: Health's startTime and EC2's NotBefore name the same moment, but
// in formats of different precision.
const sameEventSlack = time.Hour

// ScheduledKey names an EC2 scheduled event by its code and start, the
// two things its Health notice and DescribeInstanceStatus both tell.
func ScheduledKey(code string, start time.Time) string {
	return code + "@" + start.UTC().Format(time.RFC3339)
}

// Acted reports whether node records the scheduled event code starting at
// start as acted on.
func Acted(node *corev1.Node, code string, start time.Time) bool {
	for _, k := range actedKeys(node) {
		c, at, ok := strings.Cut(k, "@")
		if !ok || c != code {
			continue
		}
		t, err := time.Parse(time.RFC3339, at)
		if err == nil && SameStart(t, start) {
			return true
		}
	}
	return false
}

// SameStart reports whether two sources' start times name one scheduled
// event (within sameEventSlack).
func SameStart(a, b time.Time) bool { return a.Sub(b).Abs() <= sameEventSlack }

func actedKeys(node *corev1.Node) []string {
	var keys []string
	if raw := node.Annotations[AnnotationActed]; raw != "" {
		_ = json.Unmarshal([]byte(raw), &keys) // a mangled record names nothing
	}
	return keys
}

// RecordActed adds key (ScheduledKey) to the node's AnnotationActed,
// keeping the newest maxActed. A missing node is an error for which
// apierrors.IsNotFound holds.
func RecordActed(ctx context.Context, client kubernetes.Interface, name, key string) error {
	for attempt := 1; ; attempt++ {
		node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("getting node %s: %w", name, err)
		}
		keys := actedKeys(node)
		if slices.Contains(keys, key) {
			return nil
		}
		keys = append(keys, key)
		keys = keys[max(0, len(keys)-maxActed):]
		raw, err := json.Marshal(keys)
		if err != nil {
			return fmt.Errorf("encoding acted events: %w", err)
		}
		p := nodePatch{Metadata: patchMeta{ResourceVersion: node.ResourceVersion,
			Annotations: map[string]string{AnnotationActed: string(raw)}}}
		body, err := json.Marshal(p)
		if err != nil {
			return fmt.Errorf("encoding node patch: %w", err)
		}
		_, err = client.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, body, patchOptions())
		if err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) || attempt == cordonAttempts {
			return fmt.Errorf("patching node %s: %w", name, err)
		}
	}
}
