package version

import (
	"cmp"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// released matches a release heading of CHANGELOG.md: ## [0.1.0] - 2026-11-25.
var released = regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+[^\]]*)\] - \d{4}-\d{2}-\d{2}$`)

// TestDevelopmentSortsAfterRelease: VERSION is the number of the release
// the tree leads up to, so a development build (VERSION-dev+COMMIT) sorts
// after every release in CHANGELOG.md: a 0.1.0-dev built after 0.1.0
// would sort before it, and an operator comparing versions would take the
// newer build for the older. Only the release's own commit (its entries
// moved under its heading, nothing Unreleased yet) has VERSION equal to the
// newest release.
func TestDevelopmentSortsAfterRelease(t *testing.T) {
	b, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	v := strings.TrimSpace(file)
	dev := development(v, "0123456789abcdef")
	for _, m := range released.FindAllStringSubmatch(log, -1) {
		rel := m[1]
		switch c := compareSemver(v, rel); {
		case c > 0:
			if compareSemver(dev, rel) <= 0 {
				t.Errorf("development version %s does not sort after release %s", dev, rel)
			}
		case c == 0 && unreleasedEmpty(log):
			// The release's commit.
		default:
			t.Errorf("VERSION %s, but CHANGELOG.md records release %s: a development build (%s) would sort before it; set VERSION to the next release's number", v, rel, dev)
		}
	}
}

// unreleasedEmpty: the Unreleased section lists no entry.
func unreleasedEmpty(log string) bool {
	_, rest, ok := strings.Cut(log, "## [Unreleased]")
	if !ok {
		return true
	}
	if i := strings.Index(rest, "\n## ["); i >= 0 {
		rest = rest[:i]
	}
	return !regexp.MustCompile(`(?m)^- `).MatchString(rest)
}

func TestCompareSemver(t *testing.T) {
	// semver.org's precedence example, in order.
	order := []string{"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
		"1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1-dev+abc", "1.0.1", "1.1.0-dev", "1.1.0", "2.0.0"}
	for i := range order {
		for j := range order {
			want := strings.Compare(strconv.Itoa(1000+i), strconv.Itoa(1000+j))
			if got := compareSemver(order[i], order[j]); got != want {
				t.Errorf("compareSemver(%s, %s) = %d, want %d", order[i], order[j], got, want)
			}
		}
	}
	if compareSemver("0.1.0+a", "0.1.0+b") != 0 {
		t.Error("build metadata took part in precedence")
	}
	if !unreleasedEmpty("## [Unreleased]\n\n## [0.1.0] - 2026-11-25\n- x\n") || unreleasedEmpty("## [Unreleased]\n- y\n## [0.1.0] - 2026-11-25\n") {
		t.Error("unreleasedEmpty misreads a section")
	}
}

// compareSemver orders two semantic versions (without v) by semver 2.0.0
// precedence: -1, 0 or 1.
func compareSemver(a, b string) int {
	a, _, _ = strings.Cut(a, "+")
	b, _, _ = strings.Cut(b, "+")
	ac, apre, _ := strings.Cut(a, "-")
	bc, bpre, _ := strings.Cut(b, "-")
	if c := compareIdents(strings.Split(ac, "."), strings.Split(bc, ".")); c != 0 {
		return c
	}
	switch {
	case apre == bpre:
		return 0
	case apre == "": // a release sorts after its pre-releases
		return 1
	case bpre == "":
		return -1
	}
	return compareIdents(strings.Split(apre, "."), strings.Split(bpre, "."))
}

// compareIdents compares dot-separated identifiers: numeric ones as numbers
// and before alphanumeric ones; a shorter list first when one is a prefix.
func compareIdents(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		an, aerr := strconv.Atoi(a[i])
		bn, berr := strconv.Atoi(b[i])
		var c int
		switch {
		case aerr == nil && berr == nil:
			c = cmp.Compare(an, bn)
		case aerr == nil:
			c = -1
		case berr == nil:
			c = 1
		default:
			c = strings.Compare(a[i], b[i])
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}
