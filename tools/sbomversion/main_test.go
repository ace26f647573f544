package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSetVersionNamesTheReleaseEverywhere(t *testing.T) {
	const pseudo = "v0.0.0-20261125045725-4a102c7a6f88"
	doc := `{
  "metadata": {"component": {
    "bom-ref": "pkg:golang/github.com/drainpipe/drainpipe@` + pseudo + `?type=module#lambda",
    "name": "github.com/drainpipe/drainpipe",
    "version": "` + pseudo + `",
    "purl": "pkg:golang/github.com/drainpipe/drainpipe@` + pseudo + `?goarch=arm64&goos=linux&type=module#lambda"}},
  "components": [{"name": "github.com/aws/aws-lambda-go", "version": "v1.55.1"}],
  "dependencies": [{"ref": "pkg:golang/github.com/drainpipe/drainpipe@` + pseudo + `?type=module"}]
}`
	out, err := setVersion([]byte(doc), "0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), pseudo) {
		t.Errorf("the pseudo-version is left:\n%s", out)
	}
	var bom struct {
		Metadata struct {
			Component struct{ Version, Purl string }
		}
		Components []struct{ Version string }
	}
	if err := json.Unmarshal(out, &bom); err != nil {
		t.Fatal(err)
	}
	if bom.Metadata.Component.Version != "v0.1.0" || !strings.Contains(bom.Metadata.Component.Purl, "@v0.1.0?") {
		t.Errorf("main component = %+v, want version v0.1.0 in version and purl", bom.Metadata.Component)
	}
	if bom.Components[0].Version != "v1.55.1" {
		t.Errorf("a dependency's version changed: %s", bom.Components[0].Version)
	}
}

func TestSetVersionRefusesWhatIsNoSBOM(t *testing.T) {
	for _, doc := range []string{`not json`, `{"metadata": {}}`} {
		if _, err := setVersion([]byte(doc), "0.1.0"); err == nil {
			t.Errorf("setVersion(%q) = nil error", doc)
		}
	}
}
