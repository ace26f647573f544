package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sbomFor is a minimal cyclonedx-gomod SBOM of ./main for goos/goarch.
func sbomFor(main, goos, goarch string) string {
	const pseudo = "v0.0.0-20261125045725-4a102c7a6f88"
	return `{"metadata": {"component": {"name": "github.com/drainpipe/drainpipe", "version": "` + pseudo + `",
  "purl": "pkg:golang/github.com/drainpipe/drainpipe@` + pseudo + `?goarch=` + goarch + `&goos=` + goos + `&type=module#` + main + `"}}}`
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRunSetsEveryArtefactsSBOM(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"drainpipe-0.2.0-linux-arm64.zip":           "zip",
		"drainpipe-0.2.0-linux-arm64.zip.cdx.json":  sbomFor("lambda", "linux", "arm64"),
		"drainpipe-0.2.0-linux-x86_64.zip":          "zip",
		"drainpipe-0.2.0-linux-x86_64.zip.cdx.json": sbomFor("lambda", "linux", "amd64"),
		"drainpipe-0.2.0-darwin-arm64":              "cli",
		"drainpipe-0.2.0-darwin-arm64.cdx.json":     sbomFor("cmd/drainpipe", "darwin", "arm64"),
		"drainpipe-0.2.0.template.json":             "{}",
		"SHA256SUMS":                                "",
	})
	if err := run(dir, "0.2.0"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"drainpipe-0.2.0-linux-arm64.zip.cdx.json", "drainpipe-0.2.0-darwin-arm64.cdx.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "drainpipe@v0.2.0?") || strings.Contains(string(b), "v0.0.0-") {
			t.Errorf("%s: version not set:\n%s", name, b)
		}
	}
}

func TestRunListsEveryProblem(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"drainpipe-0.2.0-linux-amd64":               "cli without an SBOM",
		"drainpipe-0.2.0-linux-arm64.zip":           "zip",
		"drainpipe-0.2.0-linux-arm64.zip.cdx.json":  sbomFor("lambda", "linux", "amd64"), // another platform's
		"drainpipe-0.2.0-darwin-amd64":              "cli",
		"drainpipe-0.2.0-darwin-amd64.cdx.json":     sbomFor("lambda", "darwin", "amd64"), // the bootstrap's
		"drainpipe-0.2.0-linux-x86_64.zip.cdx.json": sbomFor("lambda", "linux", "amd64"),  // no zip
	})
	err := run(dir, "0.2.0")
	if err == nil {
		t.Fatal("run = nil")
	}
	for _, want := range []string{
		"drainpipe-0.2.0-linux-amd64: no SBOM",
		"drainpipe-0.2.0-linux-arm64.zip.cdx.json: main component",
		"is not ./lambda for linux/arm64",
		"drainpipe-0.2.0-darwin-amd64.cdx.json: main component",
		"is not ./cmd/drainpipe for darwin/amd64",
		"drainpipe-0.2.0-linux-x86_64.zip.cdx.json: no artefact",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
