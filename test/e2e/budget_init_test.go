package e2e

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/drainpipe/drainpipe/internal/config"
)

// TestBudgetPackageInit measures what every cold start pays before main:
// the packages' initialisation, as the Go runtime reports it
// (GODEBUG=inittrace=1), with the stack's runtime settings. Part of the
// start-to-ready budget, printed apart because a dependency bump changes it
// unseen (the AWS SDK's schemas: lambda/deps_test.go).
func TestBudgetPackageInit(t *testing.T) {
	budgetsOnly(t)
	path := bootstrap(t)
	const runs = 21
	var ms, mb []float64
	perPkg := map[string]float64{}
	env := []string{"GODEBUG=inittrace=1"}
	for k, v := range config.RuntimeEnv() {
		env = append(env, k+"="+v)
	}
	for range runs {
		cmd := exec.Command(path)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		_ = cmd.Run() // no runtime API to call: it exits once started
		took, alloc, pkgs, err := inits(stderr.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		ms, mb = append(ms, took), append(mb, alloc/(1<<20))
		for p, d := range pkgs {
			perPkg[p] += d / runs
		}
	}
	slices.Sort(ms)
	slices.Sort(mb)
	top := slices.SortedFunc(maps.Keys(perPkg), func(a, b string) int { return cmp.Compare(perPkg[b], perPkg[a]) })
	var largest []string
	for _, p := range top[:min(5, len(top))] {
		largest = append(largest, fmt.Sprintf("%s %.2f ms", p, perPkg[p]))
	}
	t.Logf("budget: package initialisation per cold start (%d starts): median %.1f ms (min %.1f, max %.1f), %.1f MiB allocated; largest: %s (part of start to ready)",
		runs, ms[runs/2], ms[0], ms[runs-1], mb[runs/2], strings.Join(largest, ", "))
}

// inits sums a process's inittrace lines ("init <pkg> @<t> ms, <d> ms
// clock, <n> bytes, <m> allocs"): milliseconds, bytes and each package's
// milliseconds.
func inits(stderr []byte) (ms, alloc float64, pkgs map[string]float64, err error) {
	pkgs = map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 9 || f[0] != "init" || f[6] != "clock," {
			continue
		}
		d, err1 := strconv.ParseFloat(f[4], 64)
		n, err2 := strconv.ParseFloat(f[7], 64)
		if err1 != nil || err2 != nil {
			return 0, 0, nil, fmt.Errorf("reading inittrace line %q", sc.Text())
		}
		ms, alloc = ms+d, alloc+n
		pkgs[f[1]] += d
	}
	if len(pkgs) == 0 {
		return 0, 0, nil, fmt.Errorf("no inittrace lines in the bootstrap's output: %.300s", stderr)
	}
	return ms, alloc, pkgs, nil
}

func TestInitsReadsInittrace(t *testing.T) {
	out := []byte("init internal/bytealg @0.004 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
		"some other line\n" +
		"init k8s.io/client-go/kubernetes/scheme @9.2 ms, 3.5 ms clock, 656493 bytes, 5190 allocs\n" +
		"init github.com/aws/aws-sdk-go-v2/service/ssm/schemas @14 ms, 2.5 ms clock, 1427044 bytes, 21000 allocs\n")
	ms, alloc, pkgs, err := inits(out)
	if err != nil {
		t.Fatal(err)
	}
	if ms != 6 || alloc != 656493+1427044 || len(pkgs) != 3 || pkgs["k8s.io/client-go/kubernetes/scheme"] != 3.5 {
		t.Errorf("inits = %v ms, %v bytes, %v", ms, alloc, pkgs)
	}
	if _, _, _, err := inits([]byte("expected AWS Lambda environment variables\n")); err == nil {
		t.Error("no inittrace lines read as a measurement")
	}
}
