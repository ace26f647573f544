package sandbox

import (
	"net"
	"os"
	"strconv"
	"testing"
)

func TestFreePorts(t *testing.T) {
	ports, err := freePorts(6)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p < portLow || p >= portHigh || seen[p] {
			t.Errorf("port %d: want distinct ports in [%d, %d)", p, portLow, portHigh)
		}
		seen[p] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Errorf("port %d not free after release: %v", p, err)
			continue
		}
		l.Close()
	}
}

func TestTail(t *testing.T) {
	path := t.TempDir() + "/log"
	if err := os.WriteFile(path, []byte("a\nb\nc\nd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := tail(path, 2), "c\nd"; got != want {
		t.Errorf("tail = %q, want %q", got, want)
	}
}
