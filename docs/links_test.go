// Package docs holds the operator documentation; this test keeps its links
// honest.
package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	fenceRE   = regexp.MustCompile("(?s)```.*?```")
	slugDrop  = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
)

// slug is GitHub's heading anchor: lower case, punctuation dropped, spaces
// as hyphens.
func slug(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = slugDrop.ReplaceAllString(h, "")
	return strings.ReplaceAll(h, " ", "-")
}

// markdownFiles lists the repository's own Markdown files.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	skip := map[string]bool{".git": true, "node_modules": true, "cdk.out": true, "dist": true, "testdata": true}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && skip[d.Name()] {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func anchors(t *testing.T, file string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, m := range headingRE.FindAllStringSubmatch(fenceRE.ReplaceAllString(string(b), ""), -1) {
		set[slug(m[1])] = true
	}
	return set
}

// TestRelativeLinks checks that every relative link in the repository's
// Markdown names a file that exists and, with a #fragment, a heading in it.
func TestRelativeLinks(t *testing.T) {
	root := ".."
	files := markdownFiles(t, root)
	if len(files) < 5 {
		t.Fatalf("found only %d Markdown files under %s", len(files), root)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := fenceRE.ReplaceAllString(string(b), "")
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(link, "#")
			target := f
			if path != "" {
				target = filepath.Join(filepath.Dir(f), path)
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s: link %q: no such file", f, link)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(target, ".md") && !anchors(t, target)[frag] {
				t.Errorf("%s: link %q: no heading #%s in %s", f, link, frag, target)
			}
		}
	}
}
