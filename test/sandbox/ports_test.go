package sandbox

import (
	"net"
	"strconv"
	"testing"
)

func TestFreePorts(t *testing.T) {
	claim, err := claimPorts(t.TempDir(), portLow, portHigh, 6)
	if err != nil {
		t.Fatal(err)
	}
	defer claim.release()
	seen := map[int]bool{}
	for _, p := range claim.ports {
		if p < portLow || p >= portHigh || seen[p] {
			t.Errorf("port %d: want distinct ports in [%d, %d)", p, portLow, portHigh)
		}
		seen[p] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Errorf("port %d not free after the claim: %v", p, err)
			continue
		}
		l.Close()
	}
}

// Between the claim and a component's bind, which for the scheduler comes
// seconds later, another sandbox (in this process or another test binary)
// must not draw the same port.
func TestClaimedPortsAreNotClaimedAgain(t *testing.T) {
	dir := t.TempDir()
	low := freeRange(t, 4)
	first, err := claimPorts(dir, low, low+4, 4)
	if err != nil {
		t.Fatal(err)
	}
	if second, err := claimPorts(dir, low, low+4, 1); err == nil {
		second.release()
		t.Fatalf("claimed port %v again while the first claim %v holds it", second.ports, first.ports)
	}
	first.release()
	again, err := claimPorts(dir, low, low+4, 4)
	if err != nil {
		t.Fatalf("a released claim's ports stay taken: %v", err)
	}
	again.release()
}

// freeRange finds n consecutive loopback ports free now.
func freeRange(t *testing.T, n int) int {
	t.Helper()
	for low := portLow; low+n <= portHigh; low += n {
		ok := true
		for p := low; p < low+n && ok; p++ {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err != nil {
				ok = false
				continue
			}
			l.Close()
		}
		if ok {
			return low
		}
	}
	t.Fatal("no free port range")
	return 0
}
