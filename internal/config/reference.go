package config

import (
	"fmt"
	"strings"
)

// ReferencePath is where the generated configuration reference lives,
// relative to the repository root.
const ReferencePath = "docs/configuration.md"

// Reference renders the configuration reference (docs/configuration.md)
// from Settings, so the page cannot say what the code does not read.
func Reference() string {
	var b strings.Builder
	b.WriteString("# Configuration\n\n")
	b.WriteString("<!-- Generated from internal/config/settings.go by `go run ./tools/gendocs`; do not edit by hand. -->\n\n")
	b.WriteString("The function reads its configuration once, at start, from environment variables; a value it cannot use\n")
	b.WriteString("stops the start with every problem listed at once. The stack sets them from its context keys\n")
	b.WriteString("(see [Deploy](deploy.md)); `drainpipe run` reads the same variables.\n\n")
	b.WriteString("| Variable | Default | Meaning |\n|---|---|---|\n")
	for _, s := range Settings() {
		fmt.Fprintf(&b, "| `%s%s` | %s | %s |\n", Prefix, s.Name, s.Default, s.Meaning)
	}
	b.WriteString("\nHow retries are timed and how a drain runs: [Drain rules and the retry window](drain.md).\n")
	return b.String()
}
