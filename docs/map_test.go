package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// commandRE matches a row of cmd/drainpipe's command table: `"name": {usage: …`.
var commandRE = regexp.MustCompile(`(?m)^\s+"([a-z][a-z-]*)":\s+\{usage:`)

// TestMapNamesEveryPackageAndCommand keeps development.md's map true: a
// package under internal/ or a command the map does not name fails here.
func TestMapNamesEveryPackageAndCommand(t *testing.T) {
	doc, err := os.ReadFile("development.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	entries, err := os.ReadDir(filepath.Join("..", "internal"))
	if err != nil {
		t.Fatal(err)
	}
	var packages int
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		packages++
		if !strings.Contains(text, "`internal/"+e.Name()+"`") {
			t.Errorf("docs/development.md: the map does not name package internal/%s (a row in Layout's table)", e.Name())
		}
	}
	main, err := os.ReadFile(filepath.Join("..", "cmd", "drainpipe", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	commands := commandRE.FindAllStringSubmatch(string(main), -1)
	for _, c := range commands {
		if !strings.Contains(text, "`drainpipe "+c[1]+"`") {
			t.Errorf("docs/development.md: the commands table does not name `drainpipe %s`", c[1])
		}
	}
	if packages == 0 || len(commands) == 0 {
		t.Fatalf("found %d packages and %d commands: the layout this test reads has moved", packages, len(commands))
	}
}
