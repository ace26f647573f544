package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// stateFile records the PIDs of a sandbox in its directory, so another
// process (make sandbox-down) can stop it.
const stateFile = "sandbox.json"

type state struct {
	Kubeconfig string      `json:"kubeconfig"`
	Processes  []stateProc `json:"processes"`
}

type stateProc struct {
	Name string `json:"name"`
	Path string `json:"path"`
	PID  int    `json:"pid"`
}

func (s *Sandbox) writeState(path string) error {
	st := state{Kubeconfig: s.kubeconfig}
	for _, p := range s.procs {
		st.Processes = append(st.Processes, stateProc{Name: p.name, Path: p.path, PID: p.pid})
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding sandbox state: %w", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// StopDir stops the sandbox whose directory is dir, started by another
// program with Options.Dir (make sandbox-down), using the PIDs it recorded.
// A PID now running some other program is left alone.
func StopDir(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return fmt.Errorf("reading sandbox state: %w", err)
	}
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("decoding %s: %w", filepath.Join(dir, stateFile), err)
	}
	s := &Sandbox{dir: dir}
	for _, p := range st.Processes {
		s.procs = append(s.procs, &process{name: p.Name, path: p.Path, pid: p.PID})
	}
	if err := s.Stop(); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, stateFile)); err != nil {
		return fmt.Errorf("removing sandbox state: %w", err)
	}
	return nil
}
