// Package regexcost checks that package-level patterns stay cheap to
// compile: they compile when a cold start loads their package, before the
// first record, and a counted repetition such as {1,255} expands to
// hundreds of instructions (1.4 ms and thousands of allocations each).
package regexcost

import (
	"regexp/syntax"
	"testing"
)

// Max is the most instructions a package-level pattern may compile to.
const Max = 100

// Check fails t for each pattern (by name) compiling to more than Max
// instructions.
func Check(t testing.TB, patterns map[string]string) {
	t.Helper()
	for name, src := range patterns {
		re, err := syntax.Parse(src, syntax.Perl)
		if err != nil {
			t.Fatalf("%s pattern %s: %v", name, src, err)
		}
		prog, err := syntax.Compile(re.Simplify())
		if err != nil {
			t.Fatalf("%s pattern %s: %v", name, src, err)
		}
		if n := len(prog.Inst); n > Max {
			t.Errorf("%s pattern %s compiles to %d instructions, want at most %d: check lengths apart", name, src, n, Max)
		}
	}
}
