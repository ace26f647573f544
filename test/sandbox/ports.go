package sandbox

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Ports are drawn below Linux's default ephemeral range (32768-60999) so
// that no outgoing connection can take one between the draw and the bind.
const portLow, portHigh = 20000, 32768

// portClaim is a set of loopback ports reserved for one sandbox. A free
// port is only free until someone binds it, and a component binds its port
// seconds after the draw (the scheduler waits for the API server), so each
// port is also held by an exclusive lock on a file named after it: every
// sandbox on the machine, in any test binary, skips a port whose lock is
// held. The kernel drops the locks when the process dies.
type portClaim struct {
	ports []int
	locks []*os.File
}

// portLockDir is where the port locks live, shared by every sandbox of
// this user on the machine.
func portLockDir() string {
	return filepath.Join(os.TempDir(), "drainpipe-sandbox-ports-"+strconv.Itoa(os.Getuid()))
}

// claimPorts reserves n distinct loopback ports in [low, high): each is
// locked in lockDir and found free by listening on it.
func claimPorts(lockDir string, low, high, n int) (*portClaim, error) {
	if err := os.MkdirAll(lockDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the port lock directory: %w", err)
	}
	c := &portClaim{}
	for tries := 0; len(c.ports) < n; tries++ {
		if tries == 1000 {
			c.release()
			return nil, fmt.Errorf("reserving %d ports in %d-%d: too many in use", n, low, high-1)
		}
		port := low + rand.IntN(high-low)
		lock, err := lockPort(lockDir, port)
		if err != nil {
			c.release()
			return nil, err
		}
		if lock == nil {
			continue // another sandbox's, or drawn twice here
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			lock.Close() // in use by something else; draw another
			continue
		}
		l.Close()
		c.ports = append(c.ports, port)
		c.locks = append(c.locks, lock)
	}
	return c, nil
}

// lockPort takes port's lock, or returns nil when another holder has it.
// flock locks belong to the open file, so a second open in this process
// conflicts too.
func lockPort(dir string, port int) (*os.File, error) {
	path := filepath.Join(dir, strconv.Itoa(port)+".lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return f, nil
}

// release gives the ports back to other sandboxes.
func (c *portClaim) release() {
	for _, f := range c.locks {
		f.Close()
	}
	c.locks = nil
}
