package handler

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"
)

// countingSweeper counts its sweeps and answers each with r.
type countingSweeper struct {
	sweeps atomic.Int32
	r      Result
}

func (s *countingSweeper) Sweep(context.Context) Result {
	s.sweeps.Add(1)
	return s.r
}

const testSweepRule = "arn:aws:events:us-east-2:123456789012:rule/drainpipe-sweep"

// A batch's sweep messages make one sweep, which goes to the Sweeper and
// never to the Actor; the other records still reach the Actor. Without a
// Sweeper the sweep messages are ignored with a reason.
func TestSweepGoesToTheSweeper(t *testing.T) {
	sweepBody := body(t, "eventbridge-scheduled-sweep.json")
	batch := events.SQSEvent{Records: []events.SQSMessage{
		msg("sweep-1", sweepBody, "1"),
		msg("spot", body(t, "eventbridge-spot-interruption.json"), "1"),
		msg("sweep-2", sweepBody, "2"),
	}}
	for _, tc := range []struct {
		name    string
		sweeper *countingSweeper
		want    map[string]string // message: outcome and reason
		sweeps  int32
	}{
		{"sweeper", &countingSweeper{r: Result{Status: StatusRetry, Reason: "sweep: 1 error"}},
			map[string]string{"sweep-1": "retry: sweep: 1 error", "sweep-2": "retry: sweep: 1 error", "spot": "done: handled"}, 1},
		{"no sweeper", nil,
			map[string]string{"sweep-1": "ignored: no sweep is configured", "sweep-2": "ignored: no sweep is configured",
				"spot": "done: handled"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			actor := &recordingActor{}
			got := map[string]string{}
			opts := Options{Actor: actor, SweepRule: testSweepRule,
				OnRecord: func(_ context.Context, s RecordSummary) { got[s.MessageID] = s.Outcome + ": " + s.Reason }}
			if tc.sweeper != nil {
				opts.Sweeper = tc.sweeper
			}
			resp, err := New(opts).Handle(t.Context(), batch)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			if tc.sweeper != nil {
				if n := tc.sweeper.sweeps.Load(); n != tc.sweeps {
					t.Errorf("%d sweeps, want %d", n, tc.sweeps)
				}
				if f := failures(resp); !cmp.Equal(f, []string{"sweep-1", "sweep-2"}) {
					t.Errorf("retried %v, want both sweep records", f)
				}
			}
			for _, task := range actor.tasks {
				if task.InstanceID == "" {
					t.Errorf("the actor got a task for no instance: %+v", task)
				}
			}
			if len(actor.tasks) != 1 {
				t.Errorf("the actor got %d tasks, want the spot warning's alone", len(actor.tasks))
			}
		})
	}
}
