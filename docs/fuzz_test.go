package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var (
	fuzzFuncRE    = regexp.MustCompile(`(?m)^func (Fuzz\w+)\(\w+ \*testing\.F\)`)
	fuzzTargetsRE = regexp.MustCompile(`(?m)^FUZZ_TARGETS :=((?:[^\n]*\\\n)*[^\n]*)`)
)

// TestFuzzTargetsListed: every fuzz target in the repository is in the
// Makefile's FUZZ_TARGETS, so `make fuzz-ci` (and CI) runs it, and every
// listed one exists.
func TestFuzzTargetsListed(t *testing.T) {
	var found []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != "..") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range fuzzFuncRE.FindAllStringSubmatch(string(b), -1) {
			found = append(found, "./"+filepath.ToSlash(filepath.Dir(strings.TrimPrefix(path, "../")))+":"+m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mk, err := os.ReadFile(filepath.Join("..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := fuzzTargetsRE.FindSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile has no FUZZ_TARGETS")
	}
	listed := strings.Fields(strings.ReplaceAll(string(m[1]), "\\\n", " "))
	slices.Sort(found)
	slices.Sort(listed)
	if !slices.Equal(found, listed) {
		t.Errorf("fuzz targets in the code %v, in the Makefile's FUZZ_TARGETS %v: want the same", found, listed)
	}
}
