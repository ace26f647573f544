package main

import "testing"

func granted(w *pacerWaiter) bool {
	select {
	case <-w.granted:
		return true
	default:
		return false
	}
}

func TestPacerGrantsTheMostUrgentFirst(t *testing.T) {
	p := &pacer{burst: 2}
	hook, spot, spot2 := p.ask(5), p.ask(1), p.ask(1)
	p.tick()
	if !granted(spot) || granted(spot2) || granted(hook) {
		t.Fatal("the first grant should go to the first Spot request")
	}
	p.tick()
	if !granted(spot2) || granted(hook) {
		t.Fatal("the second grant should go to the other Spot request")
	}
	p.tick()
	if !granted(hook) {
		t.Fatal("the hook request should be granted last")
	}
	// Idle ticks bank grants up to the burst, no more.
	p.tick()
	p.tick()
	p.tick()
	a, b, c := p.ask(9), p.ask(9), p.ask(9)
	if !granted(a) || !granted(b) || granted(c) {
		t.Fatal("two banked grants should serve two requests at once, not three")
	}
	p.forget(c)
	p.tick()
	if granted(c) || p.banked != 1 {
		t.Fatal("a forgotten request should not be granted")
	}
}
