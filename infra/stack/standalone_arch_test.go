package stack

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/google/go-cmp/cmp"
)

// releaseZip is how the Makefile's release target calls its zip macro:
// $(call zip,GOARCH,$(RELEASE)).
var releaseZip = regexp.MustCompile(`\$\(call zip,(\w+),\$\(RELEASE\)\)`)

// TestStandaloneRunsEitherReleaseZip: `make release` writes an arm64 and an
// x86_64 zip, and the standalone template ran only arm64. Its Architecture
// parameter offers exactly the architectures released, defaults to arm64
// (make build's), and sets the function's; CodeKey's description names
// the release zips.
func TestStandaloneRunsEitherReleaseZip(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	var released []string
	for _, m := range releaseZip.FindAllStringSubmatch(string(mk), -1) {
		arch := map[string]string{"amd64": "x86_64"}[m[1]]
		if arch == "" {
			arch = m[1]
		}
		released = append(released, arch)
	}
	slices.Sort(released)
	if len(released) == 0 {
		t.Fatal("Makefile: no $(call zip,GOARCH,$(RELEASE)) in the release target")
	}

	p := testProps(t)
	s, err := NewStandalone(awscdk.NewApp(nil), "Standalone", p)
	if err != nil {
		t.Fatalf("NewStandalone: %v", err)
	}
	tpl := templateOf(t, s)
	param, ok := tpl.Parameters["Architecture"]
	if !ok {
		t.Fatal("no Architecture parameter")
	}
	if param.Default != "arm64" {
		t.Errorf("Architecture defaults to %v, want arm64 (make build's)", param.Default)
	}
	raw := templateJSON(t, s)
	allowed := strs(raw["Parameters"].(map[string]any)["Architecture"].(map[string]any)["AllowedValues"])
	slices.Sort(allowed)
	if diff := cmp.Diff(released, allowed); diff != "" {
		t.Errorf("Architecture's allowed values (-released zips +allowed):\n%s", diff)
	}
	if got := tpl.render(tpl.byAlias(t, "Function").Properties["Architectures"]); got != "${Architecture}" {
		t.Errorf("the function's Architectures = %s, want the Architecture parameter", got)
	}
	key := raw["Parameters"].(map[string]any)["CodeKey"].(map[string]any)["Description"].(string)
	for _, want := range []string{"linux-arm64.zip", "x86_64.zip", "Architecture"} {
		if !strings.Contains(key, want) {
			t.Errorf("CodeKey's description %q does not name %s", key, want)
		}
	}
}

// templateJSON is s's template as plain JSON data, every field kept.
func templateJSON(t *testing.T, s awscdk.Stack) map[string]any {
	t.Helper()
	raw, err := json.Marshal(assertions.Template_FromStack(s, nil).ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
