package stack

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCordonQueue: besides the dead-letter queue the stack has the work
// queue and the cordon queue, encrypted and TLS-only like it, named after
// the stack, keeping a copy through both its deliveries to the shared
// dead-letter queue, and visible again only after a whole invocation.
func TestCordonQueue(t *testing.T) {
	for _, timeout := range []time.Duration{16 * time.Second, 5 * time.Minute, 15 * time.Minute} {
		t.Run(timeout.String(), func(t *testing.T) {
			p := testProps(t)
			p.Timeout = timeout
			tpl := synth(t, p)
			var aliases []string
			for id, r := range tpl.Resources {
				if r.Type == "AWS::SQS::Queue" {
					aliases = append(aliases, tpl.alias[id])
				}
			}
			slices.Sort(aliases)
			if diff := cmp.Diff([]string{"CordonQueue", "DeadLetterQueue", "Queue"}, aliases); diff != "" {
				t.Fatalf("queues (-want +got):\n%s", diff)
			}
			q := tpl.byAlias(t, "CordonQueue").Properties
			if q["QueueName"] != "Test-cordon" || q["SqsManagedSseEnabled"] != true || q["KmsMasterKeyId"] != nil {
				t.Errorf("QueueName %v, SqsManagedSseEnabled %v, KmsMasterKeyId %v; want Test-cordon under SSE-SQS", q["QueueName"], q["SqsManagedSseEnabled"], q["KmsMasterKeyId"])
			}
			redrive := q["RedrivePolicy"].(map[string]any)
			if got := tpl.render(redrive["deadLetterTargetArn"]); got != "${DeadLetterQueue.Arn}" || number(redrive["maxReceiveCount"]) != 2 {
				t.Errorf("redrive to %s after %v receives, want the dead-letter queue after 2", got, redrive["maxReceiveCount"])
			}
			visibility, retention := number(q["VisibilityTimeout"]), number(q["MessageRetentionPeriod"])
			if visibility < timeout.Seconds() || visibility > timeout.Seconds()+60 {
				t.Errorf("visibility %vs, want at least the function timeout %vs, and little more", visibility, timeout.Seconds())
			}
			// Redelivered once after its visibility, then dead-lettered at
			// the next receive after the second.
			if retention < 2*visibility || retention < 300 {
				t.Errorf("retention %vs, want at least 5 minutes and two visibility timeouts (%vs)", retention, 2*visibility)
			}
			var tlsDeny bool
			for _, s := range tpl.statements() {
				tlsDeny = tlsDeny || s.Where == "QueuePolicy(${CordonQueue})" && s.Effect == "Deny" && strings.Contains(s.Condition, `"aws:SecureTransport":"false"`)
			}
			if !tlsDeny {
				t.Errorf("the cordon queue's policy does not deny access without TLS")
			}
		})
	}
}

// TestCordonEventSource: the function consumes the cordon queue through a
// second event source of its own (batches of 10 at once, cordonConcurrency
// at a time), learns the queue's ARN, which tells its batches apart, and
// has both event sources' concurrency reserved.
func TestCordonEventSource(t *testing.T) {
	for _, tt := range []struct {
		set, want int
	}{{0, 20}, {10, 10}, {25, 25}} {
		p := testProps(t)
		p.CordonConcurrency = tt.set
		tpl := synth(t, p)
		esm := eventSources(t, tpl)
		if len(esm) != 2 {
			t.Fatalf("event source mappings on %v, want the work and cordon queues", esm)
		}
		want := map[string]string{
			"BatchSize":             "10",
			"EventSourceArn":        "${CordonQueue.Arn}",
			"FunctionName":          "${Function}",
			"FunctionResponseTypes": "ReportBatchItemFailures",
			"ScalingConfig":         `{"MaximumConcurrency":` + strconv.Itoa(tt.want) + `}`,
		}
		if diff := cmp.Diff(want, esm["${CordonQueue.Arn}"]); diff != "" {
			t.Errorf("cordonConcurrency %d: cordon event source (-want +got):\n%s", tt.set, diff)
		}
		fn := tpl.byAlias(t, "Function").Properties
		vars := fn["Environment"].(map[string]any)["Variables"].(map[string]any)
		if got := tpl.render(vars["DRAINPIPE_CORDON_QUEUE_ARN"]); got != "${CordonQueue.Arn}" {
			t.Errorf("DRAINPIPE_CORDON_QUEUE_ARN = %s, want the cordon queue's ARN", got)
		}
		// Reserved for both event sources: 20 by default.
		if got := number(fn["ReservedConcurrentExecutions"]); got != float64(10+tt.want) {
			t.Errorf("cordonConcurrency %d: reserved concurrency %v, want maxConcurrency 10 + %d", tt.set, got, tt.want)
		}
	}
}

// TestCordonQueueOff: cordonConcurrency -1 leaves out the queue and
// everything about it: targets, event source, variable, alarm, output,
// policies and its share of the reservation.
func TestCordonQueueOff(t *testing.T) {
	p := testProps(t)
	p.CordonConcurrency = -1
	tpl := synth(t, p)
	for id, r := range tpl.Resources {
		if strings.Contains(id, "Cordon") || tpl.alias[id] == "CordonQueue" {
			t.Errorf("resource %s (%s) with the cordon queue off", id, r.Type)
		}
		if r.Type == "AWS::Events::Rule" && tpl.alias[id] != "QueueControlAlarm" {
			if targets := asList(r.Properties["Targets"]); len(targets) != 1 || tpl.render(targets[0].(map[string]any)["Arn"]) != "${Queue.Arn}" {
				t.Errorf("rule %s targets %s, want the work queue only", id, tpl.render(targets))
			}
		}
	}
	if esm := eventSources(t, tpl); len(esm) != 1 || esm["${Queue.Arn}"] == nil {
		t.Errorf("event source mappings on %v, want the work queue's only", esm)
	}
	fn := tpl.byAlias(t, "Function").Properties
	if vars := fn["Environment"].(map[string]any)["Variables"].(map[string]any); vars["DRAINPIPE_CORDON_QUEUE_ARN"] != nil {
		t.Errorf("DRAINPIPE_CORDON_QUEUE_ARN = %v, want it unset", vars["DRAINPIPE_CORDON_QUEUE_ARN"])
	}
	if _, ok := tpl.Outputs["CordonQueueUrl"]; ok {
		t.Errorf("output CordonQueueUrl with the cordon queue off")
	}
	if got := number(fn["ReservedConcurrentExecutions"]); got != 10 {
		t.Errorf("reserved concurrency = %v, want maxConcurrency 10 alone", got)
	}
	if got := tpl.render(tpl.byAlias(t, "DeadLetterQueue").Properties["RedriveAllowPolicy"]); strings.Count(got, "arn:") != 1 {
		t.Errorf("RedriveAllowPolicy = %s, want the work queue alone", got)
	}
}

// TestCordonConcurrencyValidated: 2–1000 when on (Lambda's range), 0 the
// default, any negative off; listed with the other props' problems.
func TestCordonConcurrencyValidated(t *testing.T) {
	for _, tt := range []struct {
		value, maxConcurrency int
		want                  string
	}{
		{1, 10, "cordonConcurrency: 1 is outside 2–1000"},
		{1001, 10, "cordonConcurrency: 1001 is outside 2–1000"},
		{2, 10, ""}, {0, 10, ""}, {-1, 10, ""}, {-5, 10, ""},
		// The reservation both take by default: an account of 1000 can
		// reserve 900.
		{10, 890, ""}, {11, 890, "reservedConcurrency: reserving 901 (maxConcurrency + cordonConcurrency"},
	} {
		p := testProps(t)
		p.CordonConcurrency, p.MaxConcurrency = tt.value, tt.maxConcurrency
		checkValidate(t, p, tt.want)
	}
	// The reservation covers both event sources, or cordons would take the
	// drains' executions.
	for _, tt := range []struct {
		reserved, cordon int
		want             string
	}{
		{19, 10, "reservedConcurrency: 19 is below maxConcurrency + cordonConcurrency (20)"},
		{20, 10, ""}, {10, -1, ""},
		{9, -1, "reservedConcurrency: 9 is below maxConcurrency (10)"},
	} {
		p := testProps(t)
		p.ReservedConcurrency, p.CordonConcurrency = tt.reserved, tt.cordon
		checkValidate(t, p, tt.want)
	}
	p := testProps(t)
	p.MaxConcurrency, p.CordonConcurrency = 1000, -1
	checkValidate(t, p, "reservedConcurrency: reserving 1000 (maxConcurrency, reservedConcurrency being unset)")
	p.CordonConcurrency, p.MaxConcurrency, p.MemoryMB = 1001, 1, 64
	err := p.Validate()
	for _, want := range []string{"cordonConcurrency: 1001", "maxConcurrency: 1", "memorySize"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to list %q with the rest", err, want)
		}
	}
}

// TestCordonConcurrencyFromContext: the context key, from the CLI (a
// string) and cdk.json (a number).
func TestCordonConcurrencyFromContext(t *testing.T) {
	for v, want := range map[any]int{"-1": -1, 25.0: 25, nil: 20} {
		p, err := FromContext(func(k string) any { return map[string]any{"cordonConcurrency": v}[k] })
		if err != nil || p.CordonConcurrency != want {
			t.Errorf("cordonConcurrency %v: %d, %v; want %d", v, p.CordonConcurrency, err, want)
		}
	}
}

// eventSources are the template's event source mappings, rendered, by
// the queue each reads.
func eventSources(t *testing.T, tpl template) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	for _, m := range tpl.ofType("AWS::Lambda::EventSourceMapping") {
		got := map[string]string{}
		for k, v := range m.Properties {
			got[k] = tpl.render(v)
		}
		out[got["EventSourceArn"]] = got
	}
	return out
}
