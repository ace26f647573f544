// Command notice writes NOTICE: Drainpipe's own notice, then every
// third-party module linked into the Lambda bootstrap with its version and
// licence (read from the module's licence files in the module cache), then
// the NOTICE files those modules ship, as Apache-2.0 section 4(d) asks.
// TestNoticeCurrent fails when NOTICE no longer matches the bootstrap's
// modules; run `go run ./tools/notice` at the repository root to update it.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	out := flag.String("o", "NOTICE", "file to write")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var b bytes.Buffer
	if err := generate(ctx, ".", &b); err != nil {
		fmt.Fprintln(os.Stderr, "notice:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "notice:", err)
		os.Exit(1)
	}
}
