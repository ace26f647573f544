// Command gendocs writes the generated documentation pages (today the
// configuration reference) from the code that defines them. Run it from the
// repository root after changing internal/config/settings.go.
package main

import (
	"fmt"
	"os"

	"github.com/drainpipe/drainpipe/internal/config"
)

func main() {
	if err := os.WriteFile(config.ReferencePath, []byte(config.Reference()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}
