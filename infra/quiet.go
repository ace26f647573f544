package main

import (
	"bufio"
	"io"
	"os"
	"strings"
)

// jsiiNoise is what jsii-runtime-go prints when the app ends: jsii.Close
// waits for the node child while the runtime's own watcher goroutine is
// waiting for it too, and the loser's Wait fails with ECHILD, which the
// watcher reports (internal/kernel/process, "exited abnormally"), with no
// newline. Nothing went wrong; no setting silences it.
const jsiiNoise = "Runtime process exited abnormally: waitid: no child processes"

// quietStderr routes this process's standard error through a filter that
// drops jsiiNoise and passes everything else on. The returned stop closes
// the filter once its last line is out and returns the real standard
// error; anything written to os.Stderr after stop (the watcher reporting
// late) is dropped, so the app's own last words go to the returned writer.
func quietStderr() (stop func() io.Writer) {
	orig := os.Stderr
	r, w, err := os.Pipe()
	if err != nil {
		return func() io.Writer { return orig }
	}
	os.Stderr = w
	done := make(chan struct{})
	go func() {
		defer close(done)
		filterLines(r, orig)
	}()
	return func() io.Writer {
		w.Close()
		<-done
		return orig
	}
}

// filterLines copies r to w line by line, without jsiiNoise.
func filterLines(r io.Reader, w io.Writer) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line = strings.ReplaceAll(line, jsiiNoise, ""); line != "" && line != "\n" {
			_, _ = io.WriteString(w, line)
		}
		if err != nil {
			return
		}
	}
}
