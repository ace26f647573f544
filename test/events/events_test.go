// Package events holds sample Lambda SQS events, one file per kind, for
// `sam local invoke -e` and `drainpipe explain`. The test keeps them valid:
// each decodes as the SQS event Lambda sends and each body parses to the
// kind its file name promises.
package events_test

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/event"
)

// Outcomes of records that carry no interruption.
const (
	ignored  = "ignored"  // valid, needs no action
	rejected = "rejected" // invalid; never retried
)

func TestSampleEvents(t *testing.T) {
	want := map[string][]string{
		"spot-interruption.json":         {string(event.KindSpotInterruption)},
		"rebalance-recommendation.json":  {string(event.KindRebalanceRecommendation)},
		"state-change.json":              {string(event.KindStateChange)},
		"scheduled-change.json":          {string(event.KindScheduledChange)},
		"asg-lifecycle.json":             {string(event.KindASGLifecycle)},
		"asg-lifecycle-eventbridge.json": {string(event.KindASGLifecycle)},
		"mixed-batch.json": {
			string(event.KindSpotInterruption), string(event.KindRebalanceRecommendation), string(event.KindASGLifecycle),
			string(event.KindScheduledChange), ignored, rejected, string(event.KindASGLifecycle),
		},
	}
	files, err := filepath.Glob("*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, ok := want[f]; !ok {
			t.Errorf("%s has no expectation in this test", f)
		}
	}
	for name, wantKinds := range want {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			var ev events.SQSEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatalf("decoding SQS event: %v", err)
			}
			var got []string
			for _, r := range ev.Records {
				sum := md5.Sum([]byte(r.Body))
				if r.EventSource != "aws:sqs" || r.MessageId == "" || r.Md5OfBody != hex.EncodeToString(sum[:]) {
					t.Errorf("record %s: eventSource %q, md5OfBody %q; want aws:sqs and the body's MD5", r.MessageId, r.EventSource, r.Md5OfBody)
				}
				parsed, err := event.Parse([]byte(r.Body))
				switch {
				case errors.Is(err, event.ErrRejected):
					got = append(got, rejected)
				case err != nil:
					t.Errorf("record %s: Parse: %v, want nil or ErrRejected", r.MessageId, err)
				case len(parsed.Interruptions) == 0:
					got = append(got, ignored)
				default:
					got = append(got, string(parsed.Interruptions[0].Kind))
				}
			}
			if diff := cmp.Diff(wantKinds, got); diff != "" {
				t.Errorf("kinds per record (-want +got):\n%s", diff)
			}
		})
	}
}
