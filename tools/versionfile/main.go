// Command versionfile writes the version a build reports (version.Get) to
// a file. `make build` runs it with the bootstrap's own -ldflags, so the
// stack tags its resources with the string the function logs
// (VERSION-dev+COMMIT, or the bare number in a release), not the bare
// VERSION whatever was built.
//
//	go run -ldflags '…' ./tools/versionfile FILE
package main

import (
	"fmt"
	"os"

	"github.com/drainpipe/drainpipe/internal/version"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: versionfile FILE")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], []byte(version.Get().Version+"\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "versionfile:", err)
		os.Exit(1)
	}
}
