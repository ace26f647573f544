package drain

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestMarksInOneFile: every key marks.go declares is in MarkKeys, and no
// other product file spells one.
func TestMarksInOneFile(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "marks.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if v, err := strconv.Unquote(lit.Value); err == nil && strings.Contains(v, "/") && !strings.Contains(v, "=") {
				keys = append(keys, v)
			}
		}
		return true
	})
	listed := map[string]bool{}
	for _, m := range MarkKeys() {
		listed[m.Key] = true
	}
	for _, k := range keys {
		if !listed[k] {
			t.Errorf("%s is declared in marks.go but not in MarkKeys", k)
		}
	}
	root := filepath.Join("..", "..")
	for _, dir := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
				path == filepath.Join(root, "internal", "drain", "marks.go") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, k := range slices.Compact(slices.Sorted(slices.Values(keys))) {
				if strings.Contains(string(src), strconv.Quote(k)) {
					t.Errorf("%s spells %q: use its name in internal/drain/marks.go", path, k)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
