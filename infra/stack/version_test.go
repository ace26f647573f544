package stack

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTagVersionFollowsTheBootstrap: the version tag is the string the
// built bootstrap reports (dist/bootstrap.version, written by `make
// build`), a development build's included; VERSION only without it.
func TestTagVersionFollowsTheBootstrap(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"dist", filepath.Join("internal", "version")} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, body string) {
		if err := os.WriteFile(filepath.Join(root, path), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join("internal", "version", "VERSION"), "9.8.7\n")
	for _, tc := range []struct{ file, want string }{
		{"", "9.8.7"},
		{"9.8.7-dev+0123456789ab\n", "9.8.7-dev+0123456789ab"},
	} {
		if tc.file != "" {
			write(filepath.Join("dist", "bootstrap.version"), tc.file)
		}
		s := newStack(t, testProps(t))
		if err := TagVersion(s, root); err != nil {
			t.Fatal(err)
		}
		tpl := templateOf(t, s)
		tags, _ := tpl.byAlias(t, "Queue").Properties["Tags"].([]any)
		var got string
		for _, tag := range tags {
			if m, _ := tag.(map[string]any); m["Key"] == VersionTag {
				got, _ = m["Value"].(string)
			}
		}
		if got != tc.want {
			t.Errorf("bootstrap.version %q: tag %s = %q, want %q", tc.file, VersionTag, got, tc.want)
		}
	}
}
