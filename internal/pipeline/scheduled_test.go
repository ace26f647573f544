package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
)

// A scheduled change the node records as acted on is not acted on twice;
// only a scheduled change with its event code and start reads the node.
func TestScheduledActed(t *testing.T) {
	start := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	acted := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "acted",
		Annotations: map[string]string{drain.AnnotationActed: `["` + drain.ScheduledKey("instance-retirement", start) + `"]`}}}
	plain := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "plain"}}
	client := fake.NewClientset(acted, plain)
	sched := event.Interruption{Kind: event.KindScheduledChange, ScheduledCode: "instance-retirement", Deadline: start}
	other := sched
	other.ScheduledCode = "system-reboot"
	for _, tt := range []struct {
		name, node string
		p          event.Interruption
		want       string
		err        bool
	}{
		{"acted", "acted", sched, "scheduled event instance-retirement from 2026-11-20T10:00:00Z already acted on for node acted", false},
		{"another event", "acted", other, "", false},
		{"not recorded", "plain", sched, "", false},
		{"absent node", "absent", sched, "", true},
		{"another kind", "absent", event.Interruption{Kind: event.KindSpotInterruption, ScheduledCode: "x", Deadline: start}, "", false},
		{"no code", "absent", event.Interruption{Kind: event.KindScheduledChange, Deadline: start}, "", false},
		{"no start", "absent", event.Interruption{Kind: event.KindScheduledChange, ScheduledCode: "x"}, "", false},
	} {
		why, err := scheduledActed(context.Background(), client, tt.node, tt.p)
		if (err != nil) != tt.err || (tt.want == "") != (why == "") || !strings.HasPrefix(why, tt.want) {
			t.Errorf("%s: scheduledActed = %q, %v; want %q (error %v)", tt.name, why, err, tt.want, tt.err)
		}
	}
}
