package handler

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/drainpipe/drainpipe/internal/event"
)

// fuzzOrigins are the function ARNs a fuzzed record is admitted under:
// none (drainpipe run), the seeds' own account and region, another.
var fuzzOrigins = []string{"", "arn:aws:lambda:us-east-2:123456789012:function:drainpipe",
	"arn:aws:lambda:eu-west-1:999999999999:function:drainpipe"}

// FuzzAdmitRecord runs the batch handler's admission and planning of one
// record (any body, receive count, accepted shapes and origin) and checks:
// no panic; a body Parse refuses, or of a shape not accepted, is rejected;
// a rejected or ignored record says why and makes no task; an admitted
// one makes tasks, each for one instance (or a reservation, or the sweep)
// with only interruptions from the function's account and region, not
// dated in the future, each narrowed to the task's instance; and every
// lifecycle action it carries reaches a task, so no hook is dropped.
func FuzzAdmitRecord(f *testing.F) {
	var seeds [][]byte
	for _, glob := range []string{"../event/testdata/*.json", "../../test/events/*.json"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			var batch events.SQSEvent
			if json.Unmarshal(b, &batch) == nil && len(batch.Records) > 0 {
				for _, r := range batch.Records {
					seeds = append(seeds, []byte(r.Body))
				}
				continue
			}
			seeds = append(seeds, b)
		}
	}
	if len(seeds) == 0 {
		f.Fatal("no seed corpus")
	}
	for i, b := range seeds {
		f.Add(b, "1", uint8(i), uint8(i))
	}
	now := time.Date(2026, 11, 20, 10, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte, receives string, shapes, originIndex uint8) {
		var accept event.Shapes
		for i, s := range event.AllShapes() {
			if shapes&(1<<i) != 0 {
				accept = append(accept, s)
			}
		}
		o := origin{}
		if arn := fuzzOrigins[int(originIndex)%len(fuzzOrigins)]; arn != "" {
			var err error
			if o.Origin, err = event.OriginFromFunctionARN(arn); err != nil {
				t.Fatal(err)
			}
		}
		h := New(Options{Accept: accept, MaxEventAge: time.Hour, Now: func() time.Time { return now }})
		msg := events.SQSMessage{MessageId: "m-1", Body: string(body),
			Attributes: map[string]string{"ApproximateReceiveCount": receives, "SentTimestamp": "1795687200000"}}
		p := h.plan([]events.SQSMessage{msg}, o)
		if len(p.records) != 1 {
			t.Fatalf("%d records planned from one message", len(p.records))
		}
		r := p.records[0]
		parsed, perr := event.Parse(body)
		refused := perr != nil || event.CheckShape(parsed.Shape, accept) != nil
		switch {
		case refused && r.outcome != outcomeRejected:
			t.Fatalf("Parse: %v, shape %q of %v: outcome %q, want rejected", perr, parsed.Shape, accept, r.outcome)
		case r.outcome == outcomeRejected || r.outcome == outcomeIgnored:
			if r.reason == "" || len(r.tasks) > 0 || (r.outcome == outcomeRejected && len(p.tasks) > 0) {
				t.Fatalf("%s record: reason %q, tasks %v; want a reason and no task", r.outcome, r.reason, r.tasks)
			}
			if r.outcome == outcomeIgnored && hasHook(parsed) {
				t.Fatalf("a lifecycle action was ignored (%s): its hook would never be completed", r.reason)
			}
			return
		case r.outcome != "" || len(r.tasks) == 0:
			t.Fatalf("admitted record: outcome %q, %d tasks; want tasks to settle it", r.outcome, len(r.tasks))
		}
		hooks := 0
		for _, i := range r.tasks {
			task := p.tasks[i]
			checkTask(t, task, o, now)
			for _, in := range task.Interruptions {
				if in.Lifecycle != nil {
					hooks++
				}
			}
		}
		if want := countHooks(parsed); hooks < want {
			t.Fatalf("%d lifecycle actions in the record, %d reach a task", want, hooks)
		}
	})
}

// checkTask fails unless task is well formed and holds only admitted
// interruptions.
func checkTask(t *testing.T, task Task, o origin, now time.Time) {
	t.Helper()
	targets := 0
	for _, set := range []bool{task.InstanceID != "", task.Reservation != "", isSweep(task)} {
		if set {
			targets++
		}
	}
	if targets != 1 || len(task.Interruptions) == 0 || task.ReceiveCount < 1 ||
		(task.InstanceID != "" && !event.ValidInstanceID(task.InstanceID)) {
		t.Fatalf("malformed task %+v", task)
	}
	for _, in := range task.Interruptions {
		if err := event.CheckOrigin(in, o.Origin); err != nil {
			t.Fatalf("admitted from elsewhere: %v", err)
		}
		if err := event.CheckNotFuture(in, now); err != nil {
			t.Fatalf("admitted from the future: %v", err)
		}
		if task.InstanceID != "" && !slices.Equal(in.Instances, []string{task.InstanceID}) {
			t.Fatalf("task for %s holds an interruption naming %v", task.InstanceID, in.Instances)
		}
	}
}

func hasHook(p event.Parsed) bool { return countHooks(p) > 0 }

func countHooks(p event.Parsed) int {
	n := 0
	for _, in := range p.Interruptions {
		if in.Lifecycle != nil {
			n++
		}
	}
	return n
}
