package sandbox

import (
	"os"
	"testing"
)

func TestTail(t *testing.T) {
	path := t.TempDir() + "/log"
	if err := os.WriteFile(path, []byte("a\nb\nc\nd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := tail(path, 2), "c\nd"; got != want {
		t.Errorf("tail = %q, want %q", got, want)
	}
}
