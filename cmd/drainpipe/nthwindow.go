package main

import (
	"fmt"
	"time"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/notify/webhook"
)

// The stack's defaults for the keys the retry window is made of
// (docs/deploy.md): the function timeout is the stack's, the others the
// function's own.
const stackTimeout = 300 * time.Second

// maxSQSReceiveCount is the highest maxReceiveCount SQS takes.
const maxSQSReceiveCount = 1000

// nthWindow is how long Drainpipe keeps retrying a record, and so keeps a
// lifecycle hook pending, for the given context: NTH's heartbeatUntil.
type nthWindow struct {
	Seconds           int      `json:"seconds"`
	Window            string   `json:"window"`
	MaxReceiveCount   int      `json:"maxReceiveCount"`
	TimeoutSeconds    int      `json:"timeoutSeconds"`
	RetryDelaySeconds int      `json:"retryDelaySeconds"`
	LengthenWith      []string `json:"lengthenWith"`
	Note              string   `json:"note"`
}

// retryWindow is N × T + d₁ + … + d₍N−1₎, each delay doubling from the
// retry delay and capped at config.MaxRetryDelay (docs/drain.md).
func retryWindow(n int, timeout, delay time.Duration) time.Duration {
	w := time.Duration(n) * timeout
	d := delay
	for range n - 1 {
		w += min(d, config.MaxRetryDelay)
		d *= 2
	}
	return w
}

// window is the retry window for res's context, defaults filled in.
func (r *nthResult) window() nthWindow {
	n, t, d := config.Default().MaxReceiveCount, stackTimeout, config.Default().RetryDelay
	if v, ok := r.Context["maxReceiveCount"].(int); ok {
		n = v
	}
	w := retryWindow(n, t, d)
	return nthWindow{Seconds: int(w.Seconds()), Window: w.String(), MaxReceiveCount: n, TimeoutSeconds: int(t.Seconds()),
		RetryDelaySeconds: int(d.Seconds()), LengthenWith: []string{"maxReceiveCount", "timeoutSeconds", "retryDelaySeconds"},
		Note: "a drain a disruption budget blocks is retried, its hook heartbeated, for this long; its last delivery " +
			"completes the hook. It cannot exceed the hook's global timeout, min(100 × its heartbeat timeout, 48 h)"}
}

// nthHeartbeatUntil carries heartbeatUntil (seconds NTH heartbeats a
// hook) into the retry window: the smallest maxReceiveCount from the
// default up whose window covers it.
func nthHeartbeatUntil(res *nthResult, key string, v any) {
	until := time.Duration(number(v)) * time.Second
	if until <= 0 {
		return
	}
	n := config.Default().MaxReceiveCount
	for n < maxSQSReceiveCount && retryWindow(n, stackTimeout, config.Default().RetryDelay) < until {
		n++
	}
	if n > config.Default().MaxReceiveCount {
		res.Context["maxReceiveCount"] = n
	}
	res.gap(key, v, fmt.Sprintf("carried as the retry window (see retryWindow): maxReceiveCount %d keeps a blocked drain's "+
		"hook for %s with the default timeoutSeconds and retryDelaySeconds; Drainpipe heartbeats the hook while it "+
		"drains, every third of its heartbeat timeout, whatever heartbeatInterval; the hook itself lasts at most its "+
		"global timeout, min(100 × its HeartbeatTimeout, 48 h)", n,
		retryWindow(n, stackTimeout, config.Default().RetryDelay)))
}

// nthWebhookEnv carries a webhook template or headers into the function's
// environment when the function accepts them as they are.
func nthWebhookEnv(name string, parse func(string) error) nthRule {
	return func(res *nthResult, key string, v any) {
		s, _ := v.(string)
		if s == "" {
			return
		}
		if err := parse(s); err != nil {
			res.gap(key, v, fmt.Sprintf("not carried: the function would refuse it as %s: %v", name, err))
			return
		}
		res.env(name, s)
	}
}

func parseTemplate(s string) error { _, err := webhook.ParseTemplate(s); return err }
func parseHeaders(s string) error  { _, err := webhook.ParseHeaders(s); return err }
