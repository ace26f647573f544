package deploy_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/test/fleet"
)

// TestFlowControlSeatsAtTheWavesStart checks, by the seats a real API
// server gives flowcontrol.yaml's node level, that a wave's first cordons
// never wait for a seat. A wave comes after an idle spell, and every 10 s
// APF lends an idle level's lendable seats to the busy ones: at the wave's
// first second the level holds only its lower limit (nominal less
// lendable). With 80 % lendable that was 2 seats, and each environment's
// ten lookups and cordons went through two at a time (the 200-node wave's
// cordons paired ~70 ms apart). The lower limit must hold a batch's
// cordons at once: DRAINPIPE_RECORD_CONCURRENCY's default.
func TestFlowControlSeatsAtTheWavesStart(t *testing.T) {
	ctx, _, admin, _, _ := applyFlowControl(t)
	want := config.Default().RecordConcurrency
	var seats map[string]float64
	// The API server takes a new level in asynchronously: ask until its
	// metrics name it (or the minute ends).
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var err error
		seats, err = lowerLimitSeats(ctx, admin)
		_, ok := seats["drainpipe-nodes"]
		return ok, err
	})
	if err != nil {
		t.Fatalf("the API server's metrics never named level drainpipe-nodes: %v (lower limits: %v)", err, seats)
	}
	if got := seats["drainpipe-nodes"]; got < float64(want) {
		t.Errorf("level drainpipe-nodes keeps %.0f seats when idle (apiserver_flowcontrol_lower_limit_seats), want at least %d: "+
			"a wave's first batch cordons %d nodes at once", got, want, want)
	}
	if got := seats["drainpipe"]; got < float64(want) {
		t.Errorf("level drainpipe keeps %.0f seats when idle, want at least %d", got, want)
	}
}

// lowerLimitSeats reads each priority level's lower limit, the seats it
// keeps however much of the rest is lent.
func lowerLimitSeats(ctx context.Context, c kubernetes.Interface) (map[string]float64, error) {
	m, err := fleet.ScrapeMetrics(ctx, c)
	if err != nil {
		return nil, err
	}
	return m.Sum("apiserver_flowcontrol_lower_limit_seats", "priority_level")
}
