package floor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/live"
)

// TestFloorRetriesAreDrainpipes holds the floor's AWS retries to
// Drainpipe's: the same attempts, and waits under the same cap (the
// longest of many jittered waits comes near it).
func TestFloorRetriesAreDrainpipes(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	ctx := context.Background()
	dp, err := live.AWSConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fl, err := AWSConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dr, fr := dp.Retryer(), fl.Retryer()
	if dr.MaxAttempts() != fr.MaxAttempts() {
		t.Errorf("floor retries %d times, Drainpipe %d", fr.MaxAttempts(), dr.MaxAttempts())
	}
	longest := func(r interface {
		RetryDelay(int, error) (time.Duration, error)
	}) time.Duration {
		var most time.Duration
		for range 2000 {
			d, err := r.RetryDelay(30, errors.New("throttled"))
			if err != nil {
				t.Fatal(err)
			}
			most = max(most, d)
		}
		return most
	}
	dl, fll := longest(dr), longest(fr)
	if fll > MaxBackoff || dl > MaxBackoff {
		t.Errorf("waits above the cap %v: floor %v, Drainpipe %v", MaxBackoff, fll, dl)
	}
	if fll < MaxBackoff*9/10 || dl < MaxBackoff*9/10 {
		t.Errorf("caps differ from %v: the floor's longest wait %v, Drainpipe's %v", MaxBackoff, fll, dl)
	}
}
