package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// faultSandbox starts a sandbox of the test's own (faults disturb it) and
// returns a context for the test and a client of config maps.
func faultSandbox(t *testing.T) (*Sandbox, context.Context, typedcorev1.ConfigMapInterface) {
	t.Helper()
	sb := StartForTest(t, Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	client, err := kubernetes.NewForConfig(sb.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return sb, ctx, client.CoreV1().ConfigMaps("default")
}

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
}

// TestRestartAPIServer: after a restart the API server serves on the same
// port with the same data, a client made before it works unchanged, and
// PIDs and the state file name the new process.
func TestRestartAPIServer(t *testing.T) {
	sb, ctx, cms := faultSandbox(t)
	if _, err := cms.Create(ctx, configMap("before"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a config map before the restart: %v", err)
	}
	before := sb.PIDs()["kube-apiserver"]

	if err := sb.Restart(ctx, "kube-apiserver", 100*time.Millisecond); err != nil {
		t.Fatalf("restarting: %v", err)
	}

	after := sb.PIDs()["kube-apiserver"]
	if after == 0 || after == before {
		t.Errorf("kube-apiserver pid %d after the restart, was %d: want a new process", after, before)
	}
	if err := syscall.Kill(before, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the old kube-apiserver (pid %d) still exists: kill(0) = %v", before, err)
	}
	if _, err := cms.Create(ctx, configMap("after"), metav1.CreateOptions{}); err != nil {
		t.Errorf("creating a config map after the restart with the old client: %v", err)
	}
	if _, err := cms.Get(ctx, "before", metav1.GetOptions{}); err != nil {
		t.Errorf("getting the config map made before the restart: %v", err)
	}
	var st state
	data, err := os.ReadFile(filepath.Join(sb.Dir(), stateFile))
	if err == nil {
		err = json.Unmarshal(data, &st)
	}
	if err != nil {
		t.Fatalf("reading the state file: %v", err)
	}
	for _, p := range st.Processes {
		if p.Name == "kube-apiserver" && p.PID != after {
			t.Errorf("state file records kube-apiserver pid %d, want %d", p.PID, after)
		}
	}
}

// TestPauseEtcdAndStop: with etcd paused a write cannot complete within a
// short timeout, after Resume it does. Stop while etcd is paused again and
// a Restart keeps the scheduler down: etcd acts on SIGTERM (it is resumed,
// not killed), the Restart starts nothing and no process is left.
func TestPauseEtcdAndStop(t *testing.T) {
	sb, ctx, cms := faultSandbox(t)
	create := func(name string) error {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err := cms.Create(rctx, configMap(name), metav1.CreateOptions{})
		return err
	}

	if err := sb.Pause("etcd"); err != nil {
		t.Fatal(err)
	}
	if err := create("paused"); err == nil {
		t.Error("a write with etcd paused succeeded")
	}
	if err := sb.Resume("etcd"); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		n++
		return create(fmt.Sprintf("resumed-%d", n)) == nil, nil
	}); err != nil {
		t.Fatalf("no write succeeded after Resume: %v", err)
	}

	sb.mu.Lock()
	etcd, _ := sb.find("etcd")
	sb.mu.Unlock()
	scheduler := sb.PIDs()["kube-scheduler"]
	restarted := make(chan error, 1)
	go func() { restarted <- sb.Restart(ctx, "kube-scheduler", time.Hour) }()
	if err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
		return errors.Is(syscall.Kill(scheduler, 0), syscall.ESRCH), nil
	}); err != nil {
		t.Fatalf("Restart did not stop the scheduler: %v", err)
	}
	if err := sb.Pause("etcd"); err != nil {
		t.Fatal(err)
	}
	pids := sb.PIDs()
	if err := sb.Stop(); err != nil {
		t.Fatalf("stopping: %v", err)
	}
	if err := <-restarted; !errors.Is(err, ErrStopped) {
		t.Errorf("Restart during Stop returned %v, want ErrStopped", err)
	}
	if ws, ok := etcd.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		t.Errorf("paused etcd was killed, want it to exit on SIGTERM: %v", etcd.err)
	}
	for name, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) still exists after Stop: kill(0) = %v", name, pid, err)
		}
	}
	if got := sb.PIDs(); len(got) != 0 {
		t.Errorf("PIDs after Stop = %v", got)
	}
}
