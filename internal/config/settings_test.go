package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSettingsMatchLoad holds the settings table to what Load reads, so the
// generated reference cannot drift from the code.
func TestSettingsMatchLoad(t *testing.T) {
	var read []string
	if _, err := Load(func(k string) string {
		if strings.HasPrefix(k, Prefix) && !slices.Contains(read, k) {
			read = append(read, k)
		}
		return ""
	}); err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, s := range Settings() {
		if slices.Contains(listed, Prefix+s.Name) {
			t.Errorf("%s%s is listed twice", Prefix, s.Name)
		}
		listed = append(listed, Prefix+s.Name)
		if s.Default == "" || s.Meaning == "" {
			t.Errorf("%s%s has no default or meaning", Prefix, s.Name)
		}
	}
	for _, n := range read {
		if !slices.Contains(listed, n) {
			t.Errorf("Load reads %s, which Settings does not list", n)
		}
	}
	for _, n := range listed {
		if !slices.Contains(read, n) {
			t.Errorf("Settings lists %s, which Load never reads", n)
		}
	}
}

// TestReferenceCurrent fails when docs/configuration.md is not what
// Reference renders from the table: run `go run ./tools/gendocs`.
func TestReferenceCurrent(t *testing.T) {
	got, err := os.ReadFile(filepath.Join("..", "..", ReferencePath))
	if err != nil {
		t.Fatalf("%v (run `go run ./tools/gendocs`)", err)
	}
	if string(got) != Reference() {
		t.Errorf("%s is out of date: run `go run ./tools/gendocs`", ReferencePath)
	}
}
