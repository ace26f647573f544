package lambdart

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Build describes one `go build` of a bootstrap, made the way the Makefile
// makes the deployed one: static, -trimpath, tag lambda.norpc.
type Build struct {
	// Dir is where go runs (a directory of the module holding Package).
	Dir string
	// Package is the main package, e.g. "./lambda".
	Package string
	// Output is the path of the executable to write.
	Output string
	// GOOS and GOARCH default to the host's.
	GOOS, GOARCH string
	// Strip drops the symbol table and DWARF (-ldflags '-s -w').
	Strip bool
}

// Run builds and returns go's output in the error on failure.
func (b Build) Run(ctx context.Context) error {
	args := []string{"build", "-trimpath", "-tags", "lambda.norpc", "-o", b.Output}
	if b.Strip {
		args = append(args, "-ldflags", "-s -w")
	}
	args = append(args, b.Package)
	cmd := exec.CommandContext(ctx, goTool(), args...)
	cmd.Dir = b.Dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b.GOOS != "" {
		cmd.Env = append(cmd.Env, "GOOS="+b.GOOS)
	}
	if b.GOARCH != "" {
		cmd.Env = append(cmd.Env, "GOARCH="+b.GOARCH)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %w\n%s", b.Package, err, out)
	}
	return nil
}

// ModuleRoot returns the directory of the go.mod governing dir.
func ModuleRoot(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, goTool(), "env", "GOMOD")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("finding the module root of %s: %w", dir, err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("finding the module root of %s: not in a module", dir)
	}
	return filepath.Dir(gomod), nil
}

// goTool prefers the go that runs the tests, so builds match the toolchain.
func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}
