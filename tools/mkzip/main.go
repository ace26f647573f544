// Command mkzip writes a Lambda deployment zip holding one executable file
// named bootstrap, so the build needs no zip tool on the machine. The zip
// is reproducible: the same bootstrap gives the same bytes (a fixed
// modification time, no extra fields), so `make release` can be checked by
// building twice.
package main

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: mkzip OUT.zip BOOTSTRAP")
		os.Exit(2)
	}
	if err := write(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "mkzip:", err)
		os.Exit(1)
	}
}

// epoch is the earliest time a zip's MS-DOS fields hold.
var epoch = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

func write(out, bootstrap string) error {
	in, err := os.Open(bootstrap)
	if err != nil {
		return fmt.Errorf("opening bootstrap: %w", err)
	}
	defer in.Close()
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("creating zip: %w", err)
	}
	zw := zip.NewWriter(f)
	// A fixed time: the file's own would make every build's zip differ.
	h := &zip.FileHeader{Name: "bootstrap", Method: zip.Deflate, Modified: epoch}
	h.SetMode(0o755) // Lambda runs bootstrap only when it is executable.
	w, err := zw.CreateHeader(h)
	if err != nil {
		f.Close()
		return fmt.Errorf("adding bootstrap: %w", err)
	}
	if _, err := io.Copy(w, in); err != nil {
		f.Close()
		return fmt.Errorf("writing bootstrap: %w", err)
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return fmt.Errorf("closing zip: %w", err)
	}
	return f.Close()
}
