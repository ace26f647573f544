package docs

import (
	"bufio"
	"bytes"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/drainpipe/drainpipe/test/sandbox"
)

// gaSince is the Kubernetes minor version in which each apiVersion and kind
// deploy/ uses went GA. Sources: the Kubernetes release notes and the
// deprecated API migration guide (kubernetes.io/docs/reference/using-api/deprecation-guide):
// core v1 since 1.0; RBAC v1 in 1.8; API Priority and Fairness
// flowcontrol.apiserver.k8s.io/v1 in 1.29 (KEP-1040); ValidatingAdmissionPolicy
// admissionregistration.k8s.io/v1 in 1.30 (KEP-3488). A manifest using
// anything else fails TestSupportManifests until a row is added here, with
// its source, and to support.md.
var gaSince = map[string]int{
	"v1 Namespace": 0,
	"rbac.authorization.k8s.io/v1 ClusterRole":                         8,
	"rbac.authorization.k8s.io/v1 ClusterRoleBinding":                  8,
	"rbac.authorization.k8s.io/v1 Role":                                8,
	"rbac.authorization.k8s.io/v1 RoleBinding":                         8,
	"flowcontrol.apiserver.k8s.io/v1 PriorityLevelConfiguration":       29,
	"flowcontrol.apiserver.k8s.io/v1 FlowSchema":                       29,
	"admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy":        30,
	"admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding": 30,
}

var (
	manifestRow    = regexp.MustCompile("^\\| `([^`]+)` \\| `([^`]+)` \\| `deploy/([^`]+)` \\| 1\\.(\\d+) \\|")
	minimumLine    = regexp.MustCompile(`\*\*Minimum Kubernetes version: 1\.(\d+)\*\*`)
	matrixRow      = regexp.MustCompile("^\\| (1\\.\\d+) \\| `(v[0-9.]+)` \\| (?:passed|failed|not run)[^|]* \\| [^|]+ \\| `make test-matrix K8S_MATRIX=(v[0-9.]+)` \\|$")
	karpenterRow   = regexp.MustCompile("^\\| `(karpenter\\.[a-z0-9.]+/[a-z0-9-]+)` \\|")
	karpenterKey   = regexp.MustCompile(`karpenter\.(?:sh|k8s\.aws)/[a-z0-9-]+`)
	buildVersion   = regexp.MustCompile(`(?m)^DEFAULT_K8S_VERSION=(v[0-9.]+)$`)
	goModDirective = regexp.MustCompile(`(?m)^(go|toolchain) (\S+)$`)
)

func readSupport(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("support.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// deployKinds returns "apiVersion kind" → the deploy/ files using it.
func deployKinds(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "deploy", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no deploy/*.yaml (%v)", err)
	}
	out := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
		for {
			var obj struct{ APIVersion, Kind string }
			if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			// Not a Kubernetes object (cloudwatch-exporter.yaml is an
			// exporter's configuration); half of one is a broken manifest.
			if obj.APIVersion == "" && obj.Kind == "" {
				continue
			}
			if obj.APIVersion == "" || obj.Kind == "" {
				t.Fatalf("%s: a document has apiVersion %q and kind %q", f, obj.APIVersion, obj.Kind)
			}
			key := obj.APIVersion + " " + obj.Kind
			if name := filepath.Base(f); !slices.Contains(out[key], name) {
				out[key] = append(out[key], name)
			}
		}
	}
	return out
}

// TestSupportManifests: every apiVersion and kind in deploy/*.yaml has a row
// in support.md naming its manifest and the version it went GA, and the
// stated minimum Kubernetes version covers them all.
func TestSupportManifests(t *testing.T) {
	doc := readSupport(t)
	rows := map[string][]string{} // key → manifests named
	since := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(doc))
	for sc.Scan() {
		m := manifestRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		key := m[1] + " " + m[2]
		rows[key] = append(rows[key], m[3])
		since[key], _ = strconv.Atoi(m[4])
	}
	used := deployKinds(t)
	highest := 0
	for _, key := range slices.Sorted(maps.Keys(used)) {
		ga, known := gaSince[key]
		if !known {
			t.Errorf("%s (in %v): not in this test's GA table; add when it went GA, with the source", key, used[key])
			continue
		}
		highest = max(highest, ga)
		if _, ok := rows[key]; !ok {
			t.Errorf("support.md has no row for %s (in %v)", key, used[key])
			continue
		}
		if since[key] != ga {
			t.Errorf("support.md: %s since 1.%d, but it went GA in 1.%d", key, since[key], ga)
		}
		slices.Sort(rows[key])
		if !slices.Equal(rows[key], used[key]) {
			t.Errorf("support.md names %s in %v, deploy/ has it in %v", key, rows[key], used[key])
		}
	}
	for key := range rows {
		if _, ok := used[key]; !ok {
			t.Errorf("support.md lists %s, which no manifest in deploy/ uses", key)
		}
	}
	m := minimumLine.FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("support.md: no \"**Minimum Kubernetes version: 1.N**\" line")
	}
	if minimum, _ := strconv.Atoi(m[1]); minimum < highest {
		t.Errorf("support.md: minimum Kubernetes 1.%d, but deploy/ needs 1.%d", minimum, highest)
	}
}

// TestSupportSandboxVersion: the sandbox's default version is the one
// build.sh builds by default, from its module's Kubernetes; every other
// version of the matrix has a module of its own pinning it; the Makefile's
// K8S_MATRIX is the same list (the sandbox's start test checks the server
// reports the version selected).
func TestSupportSandboxVersion(t *testing.T) {
	build := filepath.Join("..", "test", "sandbox", "build")
	b, err := os.ReadFile(filepath.Join(build, "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if v := buildVersion.FindSubmatch(b); v == nil || string(v[1]) != sandbox.DefaultKubernetesVersion {
		t.Errorf("test/sandbox/build/build.sh builds %q by default, the sandbox says %s", v, sandbox.DefaultKubernetesVersion)
	}
	versions := sandbox.KubernetesVersions()
	if versions[len(versions)-1] != sandbox.DefaultKubernetesVersion {
		t.Errorf("the matrix %v does not end with the default version %s", versions, sandbox.DefaultKubernetesVersion)
	}
	for _, v := range versions {
		dir := build
		if v != sandbox.DefaultKubernetesVersion {
			dir = filepath.Join(build, v)
		}
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			t.Errorf("Kubernetes %s: no module pins it: %v", v, err)
			continue
		}
		if !regexp.MustCompile(`(?m)^\s*(require )?k8s\.io/kubernetes ` + regexp.QuoteMeta(v) + `( // indirect)?$`).Match(mod) {
			t.Errorf("%s does not require k8s.io/kubernetes %s", filepath.Join(dir, "go.mod"), v)
		}
	}
	if got := strings.Fields(makeVariable(t, "K8S_MATRIX")); !slices.Equal(got, versions) {
		t.Errorf("the Makefile's K8S_MATRIX is %v, the sandbox's versions %v", got, versions)
	}
}

// TestSupportMatrixTable: support.md has, under the heading of the version
// in internal/version/VERSION, a row for every version of the matrix, in
// order, each naming its minor, tag, result and command.
func TestSupportMatrixTable(t *testing.T) {
	doc := readSupport(t)
	v, err := os.ReadFile(filepath.Join("..", "internal", "version", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	heading := "#### Drainpipe " + strings.TrimSpace(string(v))
	_, section, ok := strings.Cut(doc, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("support.md: no %q heading over the matrix of this version", heading)
	}
	if i := strings.Index(section, "\n#"); i >= 0 {
		section = section[:i]
	}
	var tags []string
	for _, line := range strings.Split(section, "\n") {
		m := matrixRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		tags = append(tags, m[2])
		if minor := strings.Join(strings.SplitN(strings.TrimPrefix(m[2], "v"), ".", 3)[:2], "."); m[1] != minor {
			t.Errorf("support.md: row of %s says Kubernetes %s", m[2], m[1])
		}
		if m[3] != m[2] {
			t.Errorf("support.md: row of %s gives the command for %s", m[2], m[3])
		}
	}
	if !slices.Equal(tags, sandbox.KubernetesVersions()) {
		t.Errorf("support.md's %s table lists %v, the matrix is %v", heading, tags, sandbox.KubernetesVersions())
	}
}

// TestSupportMatrixPackages: make test-matrix runs every package whose
// tests start a sandbox (sandbox.Main, MainWith or StartForTest), but the
// fleet, chaos and benchmark rigs, which measure rather than prove.
func TestSupportMatrixPackages(t *testing.T) {
	listed := strings.Fields(makeVariable(t, "MATRIX_PKGS"))
	starts := regexp.MustCompile(`sandbox\.(Main|MainWith|StartForTest)\(`)
	var missing []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		if d.IsDir() {
			switch rel {
			case "node_modules", "infra", "test/fleet", "test/chaos", "test/bench", "test/sandbox/build", "dist", "cdk.out":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil || !starts.Match(b) {
			return err
		}
		pkg := "./" + filepath.Dir(rel)
		covered := slices.ContainsFunc(listed, func(l string) bool {
			return l == pkg || strings.HasSuffix(l, "/...") && (pkg == strings.TrimSuffix(l, "/...") || strings.HasPrefix(pkg, strings.TrimSuffix(l, "...")))
		})
		if !covered && !slices.Contains(missing, pkg) {
			missing = append(missing, pkg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("the Makefile's MATRIX_PKGS lacks %v, whose tests start the sandbox", missing)
	}
}

// makeVariable is the value of a Makefile variable set with ?= or :=,
// continuation lines joined.
func makeVariable(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + `\s*[?:]?=\s*((?:.*\\\n)*.*)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("the Makefile sets no %s", name)
	}
	return strings.ReplaceAll(string(m[1]), "\\\n", " ")
}

// TestSupportKarpenterMarks: the Karpenter keys support.md lists are those
// the code recognises, read from the string constants of every non-test Go
// file of the function and the command.
func TestSupportKarpenterMarks(t *testing.T) {
	var listed []string
	sc := bufio.NewScanner(strings.NewReader(readSupport(t)))
	for sc.Scan() {
		if m := karpenterRow.FindStringSubmatch(sc.Text()); m != nil {
			listed = append(listed, m[1])
		}
	}
	code := map[string]bool{}
	fset := token.NewFileSet()
	for _, dir := range []string{"internal", "cmd", "lambda"} {
		err := filepath.WalkDir(filepath.Join("..", dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						for _, k := range karpenterKey.FindAllString(s, -1) {
							code[k] = true
						}
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(listed)
	if want := slices.Sorted(maps.Keys(code)); !slices.Equal(listed, want) {
		t.Errorf("support.md's Karpenter table lists %v; the code recognises %v", listed, want)
	}
}

// TestSupportGoVersions: the Go language and toolchain versions support.md
// states are go.mod's.
func TestSupportGoVersions(t *testing.T) {
	doc := readSupport(t)
	b, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range goModDirective.FindAllSubmatch(b, -1) {
		want := "language `" + string(m[2]) + "`"
		if string(m[1]) == "toolchain" {
			want = "toolchain `" + string(m[2]) + "`"
		}
		if !strings.Contains(doc, want) {
			t.Errorf("support.md does not say %s (go.mod: %s)", want, m[0])
		}
	}
}
