package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// sbomSuffix names an artefact's SBOM: ARTEFACT.cdx.json.
const sbomSuffix = ".cdx.json"

// run sets the version of every SBOM in dir and checks each artefact has
// its own, listing every problem at once.
func run(dir, version string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	var problems []error
	for _, name := range names {
		artefact, isSBOM := strings.CutSuffix(name, sbomSuffix)
		switch {
		case isSBOM && !slices.Contains(names, artefact):
			problems = append(problems, fmt.Errorf("%s: no artefact %s beside it", name, artefact))
		case isSBOM:
			if err := setFile(filepath.Join(dir, name), artefact, version); err != nil {
				problems = append(problems, fmt.Errorf("%s: %w", name, err))
			}
		case !notArtefact(name) && !slices.Contains(names, name+sbomSuffix):
			problems = append(problems, fmt.Errorf("%s: no SBOM (%s)", name, name+sbomSuffix))
		}
	}
	return errors.Join(problems...)
}

// notArtefact: a release file that is no build of Go code.
func notArtefact(name string) bool {
	return name == "SHA256SUMS" || strings.HasSuffix(name, ".template.json")
}

// setFile sets one SBOM's version after checking it describes artefact.
func setFile(path, artefact, version string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := describes(b, artefact, version); err != nil {
		return err
	}
	out, err := setVersion(b, version)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

// describes checks that the SBOM's main component is the artefact's main
// package built for its platform, read from the artefact's name:
// drainpipe-VERSION-linux-ARCH.zip is ./lambda (ARCH as Lambda names it),
// drainpipe-VERSION-OS-ARCH is ./cmd/drainpipe.
func describes(doc []byte, artefact, version string) error {
	var bom struct {
		Metadata struct {
			Component struct {
				Purl string `json:"purl"`
			} `json:"component"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(doc, &bom); err != nil {
		return fmt.Errorf("not a CycloneDX JSON document: %w", err)
	}
	rest, ok := strings.CutPrefix(artefact, "drainpipe-"+strings.TrimPrefix(version, "v")+"-")
	if !ok {
		return fmt.Errorf("%s is not named drainpipe-%s-OS-ARCH", artefact, version)
	}
	main := "cmd/drainpipe"
	if r, zip := strings.CutSuffix(rest, ".zip"); zip {
		rest, main = strings.Replace(r, "x86_64", "amd64", 1), "lambda"
	}
	goos, goarch, _ := strings.Cut(rest, "-")
	purl := bom.Metadata.Component.Purl
	_, query, _ := strings.Cut(purl, "?")
	query, subpath, _ := strings.Cut(query, "#")
	q, err := url.ParseQuery(query)
	if err != nil {
		return fmt.Errorf("main component purl %q: %w", purl, err)
	}
	if q.Get("goos") != goos || q.Get("goarch") != goarch || subpath != main {
		return fmt.Errorf("main component %q is not ./%s for %s/%s", purl, main, goos, goarch)
	}
	return nil
}
