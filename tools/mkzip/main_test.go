package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The same bootstrap gives the same zip, whenever it was built.
func TestZipIsReproducible(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bootstrap")
	if err := os.WriteFile(bin, bytes.Repeat([]byte("drainpipe"), 1000), 0o755); err != nil {
		t.Fatal(err)
	}
	var zips [][]byte
	for i, mtime := range []time.Time{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), time.Date(2027, 6, 7, 8, 9, 10, 0, time.UTC)} {
		if err := os.Chtimes(bin, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "z"+string(rune('0'+i))+".zip")
		if err := write(out, bin); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		zips = append(zips, b)
	}
	if !bytes.Equal(zips[0], zips[1]) {
		t.Fatal("two zips of the same bootstrap differ")
	}
}
