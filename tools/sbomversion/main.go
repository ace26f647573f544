// Command sbomversion sets the version of each CycloneDX SBOM's main
// component in a release directory to the release's, and checks that every
// artefact there has its SBOM, of its platform and its main package.
// cyclonedx-gomod takes the version from git and, on an untagged commit,
// writes a pseudo-version (v0.0.0-date-hash) that matches nothing an
// operator deploys; the release's own version (the one stamped into the
// bootstrap and the command) replaces it everywhere the main component is
// named: its version, bom-ref, purl and dependency refs.
//
// An artefact's SBOM is ARTEFACT.cdx.json beside it: the bootstrap zips'
// (drainpipe-VERSION-linux-ARCH.zip) describe ./lambda, the commands'
// (drainpipe-VERSION-OS-ARCH) ./cmd/drainpipe, each for its GOOS and GOARCH.
//
//	go run ./tools/sbomversion DIR VERSION
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: sbomversion DIR VERSION")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "sbomversion:", err)
		os.Exit(1)
	}
}

// setVersion replaces the main component's version, as written by
// cyclonedx-gomod, with "v"+version wherever the component is named.
func setVersion(doc []byte, version string) ([]byte, error) {
	var bom struct {
		Metadata struct {
			Component struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"component"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(doc, &bom); err != nil {
		return nil, fmt.Errorf("not a CycloneDX JSON document: %w", err)
	}
	c := bom.Metadata.Component
	if c.Name == "" || c.Version == "" {
		return nil, errors.New("no metadata.component with a name and a version")
	}
	want := "v" + strings.TrimPrefix(version, "v")
	s := string(doc)
	s = strings.ReplaceAll(s, c.Name+"@"+c.Version, c.Name+"@"+want)
	s = strings.ReplaceAll(s, `"version": "`+c.Version+`"`, `"version": "`+want+`"`)
	if !json.Valid([]byte(s)) {
		return nil, errors.New("the result is not valid JSON")
	}
	return []byte(s), nil
}
