// Command mkzip writes a Lambda deployment zip holding one executable file
// named bootstrap, so the build needs no zip tool on the machine.
package main

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
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
	h := &zip.FileHeader{Name: "bootstrap", Method: zip.Deflate}
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
