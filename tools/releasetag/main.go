// Command releasetag refuses a release build (`make release`, which stamps
// the bare version) anywhere but on a clean checkout of its tag vVERSION:
// a release number on other code would name two different builds, and an
// operator comparing versions could not tell them apart. Other builds say
// VERSION-dev+COMMIT.
//
//	go run ./tools/releasetag VERSION
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: releasetag VERSION")
		os.Exit(2)
	}
	// No tag on HEAD is an answer ("" below), not a failure.
	tag, _ := exec.Command("git", "describe", "--exact-match", "--tags", "HEAD").Output()
	status, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "releasetag: reading the checkout:", err)
		os.Exit(1)
	}
	if err := check(os.Args[1], strings.TrimSpace(string(tag)), len(strings.TrimSpace(string(status))) > 0); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// check says why a release of version cannot be built from a checkout
// whose HEAD carries tag (empty: none), with changes when dirty.
func check(version, tag string, dirty bool) error {
	want := "v" + version
	switch {
	case tag == "":
		return fmt.Errorf("HEAD is not tagged %s: a release is built from its tag (git tag %s, or check it out); `make build` and `make cli` build development versions", want, want)
	case tag != want:
		return fmt.Errorf("HEAD is tagged %s, not %s (internal/version/VERSION says %s)", tag, want, version)
	case dirty:
		return fmt.Errorf("the checkout has changes: a release is built from its tag as committed")
	}
	return nil
}
