package config

import "strconv"

// GOGC is the collector setting every deployment gives the function, in
// its GOGC variable: the Go runtime reads it before any package is
// initialised, so a cold start's own initialisation does not collect and
// a wave's environments, starting at once, reach main sooner
// (docs/performance.md#why-the-constants-are-what-they-are). An
// environment's heap is small beside its memory: the function sets a soft
// limit too (lambda/gc.go).
const GOGC = 400

// RuntimeEnv is what the function's environment holds besides its
// DRAINPIPE_* settings; the stack sets it, an operator's own value wins.
func RuntimeEnv() map[string]string {
	return map[string]string{"GOGC": strconv.Itoa(GOGC)}
}
