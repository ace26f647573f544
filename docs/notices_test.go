package docs

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/test/awsfake"
)

// notices sends, as AWS would in the middle of step, a Spot warning and a
// scale-in of the group, and waits until every copy a running consumer
// can read is handled. A notice no live handler acted on is lost.
func (w *world) notices(step string) {
	w.t.Helper()
	w.seq += 2
	spot, scaleIn := fmt.Sprintf("i-%017x", w.seq-1), fmt.Sprintf("i-%017x", w.seq)
	var expect int
	expect += w.spot(spot)
	if w.suspended {
		w.deferred = append(w.deferred, scaleIn)
	} else {
		expect += w.scaleIn(scaleIn)
	}
	w.await(expect)
	w.judge(step, spot)
	if !w.suspended {
		w.judge(step, scaleIn)
	}
}

// spot is EventBridge fanning a Spot warning out to every enabled rule's
// queue; it returns the copies a running consumer will read.
func (w *world) spot(instance string) int {
	body := sampleBody(w.t, "spot", event.SampleSpec{Instance: instance})
	n := 0
	if w.nthRules && w.nthQueue != "" {
		n += w.send(w.nthQueue, body, w.nth != nil)
	}
	if w.dpRules {
		n += w.send(w.dpQueue, body, w.dp != nil)
	}
	return n
}

// scaleIn is Auto Scaling terminating an instance of the group: its hook
// sends the action to NTH's queue or to EventBridge (both stacks' rules
// match the group); while the hook is recreated there is none, and the
// instance goes undrained.
func (w *world) scaleIn(instance string) int {
	w.scaleInSeen++
	body := sampleBody(w.t, "asg-terminate", event.SampleSpec{Instance: instance, Group: rehearsalGroup, Hook: rehearsalHook,
		Token: fmt.Sprintf("00000000-0000-0000-0000-%012d", w.scaleInSeen)})
	n := 0
	switch w.hookTarget {
	case "nth-queue":
		if w.nthQueue != "" {
			n += w.send(w.nthQueue, body, w.nth != nil)
		}
	case "eventbridge":
		if w.nthRules && w.nthQueue != "" {
			n += w.send(w.nthQueue, body, w.nth != nil)
		}
		if w.dpRules {
			n += w.send(w.dpQueue, body, w.dp != nil)
		}
	}
	return n
}

func (w *world) send(queue, body string, read bool) int {
	if _, err := w.fake.SendMessage(queue, body); err != nil {
		w.t.Fatal(err)
	}
	if read {
		return 1
	}
	return 0
}

// await waits for n handled messages: the consumers signal each one.
func (w *world) await(n int) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard, not a measure
	defer cancel()
	for range n {
		select {
		case <-w.handled:
		case <-ctx.Done():
			w.t.Fatalf("a consumer did not handle %d messages", n)
		}
	}
}

// judge records instance's notice as lost when no live handler acted on
// it: a copy left in a queue nobody reads is not acted on in time either.
func (w *world) judge(step, instance string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.acted[instance]) == 0 {
		w.lost = append(w.lost, step+": "+instance)
		w.acted[instance] = nil
	}
}

// sampleBody is the EventBridge event `drainpipe event KIND` writes.
func sampleBody(t *testing.T, kind string, s event.SampleSpec) string {
	t.Helper()
	s.Account, s.Region, s.Now = rehearsalAccount, awsfake.Region, time.Now()
	s.NewID = func() string { return "11111111-2222-3333-4444-555555555555" }
	e, err := event.WriteSample(kind, s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{
		"version": "0", "id": "7e1c1c8a-0d07-4c4e-9b8e-3c9d3b0c5a11", "detail-type": e.DetailType, "source": e.Source,
		"account": rehearsalAccount, "time": e.Time.UTC().Format(time.RFC3339), "region": awsfake.Region,
		"resources": e.Resources, "detail": e.Detail,
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// instanceOf is the instance a sample body names, as NTH reads it.
func instanceOf(body string) string {
	var e struct {
		Detail struct {
			InstanceID  string `json:"instance-id"`
			EC2Instance string `json:"EC2InstanceId"`
		} `json:"detail"`
	}
	_ = json.Unmarshal([]byte(body), &e)
	if e.Detail.InstanceID != "" {
		return e.Detail.InstanceID
	}
	return e.Detail.EC2Instance
}

// repoint recreates the group's hook with target, its Terminate process
// suspended: a scale-in asked for meanwhile waits and runs once the
// process resumes, through the new hook.
func (w *world) repoint(target string) {
	w.suspended = true
	w.notices("scale-in suspended")
	w.hookTarget = "" // deleted
	w.notices("hook deleted")
	w.hookTarget = target
	w.notices("hook recreated")
	w.suspended = false
	deferred := w.deferred
	w.deferred = nil
	n := 0
	for _, id := range deferred {
		n += w.scaleIn(id)
	}
	w.await(n)
	for _, id := range deferred {
		w.judge("scale-in resumed", id)
	}
}

// proveNTH sends a generated notice straight to NTH's queue and requires
// NTH to act on it.
func (w *world) proveNTH() {
	w.t.Helper()
	w.seq++
	id := fmt.Sprintf("i-%017x", w.seq)
	if w.nth == nil || w.nthQueue == "" {
		w.t.Fatal("NTH is not running on a queue: nothing can prove it receives")
	}
	w.await(w.send(w.nthQueue, sampleBody(w.t, "spot", event.SampleSpec{Instance: id}), true))
	w.mu.Lock()
	defer w.mu.Unlock()
	if !slices.Contains(w.acted[id], "nth") {
		w.t.Fatalf("NTH did not act on the test notice for %s", id)
	}
}

// waiting counts the messages of queue no consumer has deleted.
func (w *world) waiting(queue string) int {
	msgs, err := w.fake.QueueMessages(queue)
	if err != nil {
		w.t.Fatal(err)
	}
	n := 0
	for _, m := range msgs {
		if m.DeletedAt.IsZero() && !m.DeadLettered {
			n++
		}
	}
	return n
}
