package drain

import (
	"context"
	"testing"
	"time"
)

// The critical wave waits for the ordinary pods: it starts once each is
// gone, refused, stuck or blocked by its budget, or once the critical
// reserve before the deadline has begun; critical and protected pods do
// not hold it. A stopped Run starts no wave.
func TestCriticalWaveWaitsForTheOrdinaryPods(t *testing.T) {
	const reserve = 15 * time.Second
	for _, c := range []struct {
		name                string
		state               state
		critical, protected bool
		deadlineIn          time.Duration // from now; 0: none
		stopped             bool
		wantStart, wantWait bool // wantWait: it started only once the pod went
	}{
		{"ordinary pod evicting", stateEvicted, false, false, 0, false, true, true},
		{"ordinary pod blocked by its budget", stateBlocked, false, false, 0, false, true, false},
		{"critical pod", statePending, true, false, 0, false, true, false},
		{"protected pod", statePending, false, true, 0, false, true, false},
		{"deadline beyond the reserve", statePending, false, false, time.Hour, false, true, true},
		{"deadline inside the reserve", statePending, false, false, reserve / 2, false, true, false},
		{"run stopped", statePending, false, false, 0, true, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.CriticalReserve = reserve
			d := New(nil, cfg, nil)
			tg := &target{key: "shop/web", state: c.state, critical: c.critical, protected: c.protected, gone: make(chan struct{})}
			looked := make(chan struct{}, 1)
			sawGone := false           // whether the pod was gone at the wave's last look
			d.now = func() time.Time { // called at each look, under r.mu
				sawGone = tg.isGone
				select {
				case looked <- struct{}{}:
				default:
				}
				return time.Now()
			}
			stop, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.stopped {
				cancel()
			}
			r := &run{d: d, stop: stop, targets: map[string]*target{tg.key: tg}, changed: make(chan struct{})}
			if c.deadlineIn > 0 {
				r.req.Deadline = time.Now().Add(c.deadlineIn)
			}
			started := make(chan bool, 1)
			go func() { started <- r.waitWave() }()
			<-looked
			r.mu.Lock()
			tg.isGone = true
			r.broadcast()
			r.mu.Unlock()
			select {
			case got := <-started:
				if got != c.wantStart || sawGone != c.wantWait {
					t.Errorf("wave started %v, after the pod went %v; want %v, %v", got, sawGone, c.wantStart, c.wantWait)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the wave still waits after the pod went")
			}
		})
	}
}
