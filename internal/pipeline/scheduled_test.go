package pipeline

import (
	"context"
	"log/slog"
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

// A finished scheduled-change drain is recorded on the node, except in a
// dry run or for another kind; a failed write is only logged.
func TestRecordScheduled(t *testing.T) {
	start := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	sched := event.Interruption{Kind: event.KindScheduledChange, ScheduledCode: "instance-retirement", Deadline: start}
	spot := event.Interruption{Kind: event.KindSpotInterruption, ScheduledCode: "instance-retirement", Deadline: start}
	for _, tt := range []struct {
		name   string
		dryRun bool
		p      event.Interruption
		want   bool
	}{
		{"scheduled change", false, sched, true},
		{"dry run", true, sched, false},
		{"another kind", false, spot, false},
	} {
		client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
		a := &Actor{cfg: Config{DryRun: tt.dryRun}}
		a.recordScheduled(context.Background(), client, "n1", tt.p, slog.New(slog.DiscardHandler))
		node, err := client.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := drain.Acted(node, "instance-retirement", start); got != tt.want {
			t.Errorf("%s: recorded %v, want %v", tt.name, got, tt.want)
		}
	}
	var logs strings.Builder
	a := &Actor{}
	a.recordScheduled(context.Background(), fake.NewClientset(), "absent", sched, slog.New(slog.NewTextHandler(&logs, nil)))
	if !strings.Contains(logs.String(), "recording the scheduled event acted on") {
		t.Errorf("log %q, want the failed write", logs.String())
	}
}
