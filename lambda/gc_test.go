package main

import "testing"

func TestGCSettings(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	cases := []struct {
		name       string
		env        map[string]string
		percent    int
		setPercent bool
		limit      int64
		setLimit   bool
	}{
		{"lambda", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256"}, gcPercent, true, 192 << 20, true},
		{"no memory size", map[string]string{}, gcPercent, true, 0, false},
		{"bad memory size", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "lots"}, gcPercent, true, 0, false},
		{"operator's GOGC", map[string]string{"GOGC": "100", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128"}, 0, false, 96 << 20, true},
		{"operator's GOMEMLIMIT", map[string]string{"GOMEMLIMIT": "64MiB", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128"}, gcPercent, true, 0, false},
	}
	for _, c := range cases {
		p, sp, l, sl := gcSettings(env(c.env))
		if p != c.percent || sp != c.setPercent || l != c.limit || sl != c.setLimit {
			t.Errorf("%s: got (%d, %t, %d, %t), want (%d, %t, %d, %t)", c.name, p, sp, l, sl, c.percent, c.setPercent, c.limit, c.setLimit)
		}
	}
}
