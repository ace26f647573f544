package main

import (
	"bufio"
	"fmt"
	"strings"
)

// confirmed says whether a bulk write may go ahead: with --yes (yes), or
// when standard input is a terminal and the operator answers y to what.
// Without a terminal it never reads an answer: a script piping its input
// must say --yes, so a change to many nodes or messages is always asked
// for. It prints why when it says no; the caller exits exitUsage.
func confirmed(c cli, cmd, what, dryRun string, yes bool) bool {
	if yes {
		return true
	}
	if !c.Terminal {
		fmt.Fprintf(c.Stderr, "drainpipe %s: not confirmed, nothing done. It would %s\n"+
			"Give --yes to go ahead (standard input is not a terminal, so nothing is asked)%s.\n", cmd, what, dryRun)
		return false
	}
	fmt.Fprintf(c.Stderr, "drainpipe %s would %s\nGo ahead? [y/N] ", cmd, what)
	answer, _ := bufio.NewReader(c.Stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true
	}
	fmt.Fprintf(c.Stderr, "drainpipe %s: not confirmed, nothing done.\n", cmd)
	return false
}
