package version

import (
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// semver 2.0.0, without the leading v.
var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

func TestVersionFileIsSemver(t *testing.T) {
	if v := strings.TrimSpace(file); !semver.MatchString(v) {
		t.Fatalf("VERSION %q is not a semantic version without a leading v", v)
	}
}

func TestGet(t *testing.T) {
	base := strings.TrimSpace(file)
	installed := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/drainpipe/drainpipe", Version: "v0.2.0"}}
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}, {Key: "vcs.modified", Value: "true"}}
	// Go 1.24 on: a build in a checkout records a version derived from
	// the tags, +dirty when the tree has changes.
	local := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.0.0-20261120100000-0123456789ab+dirty"}, Settings: vcs}
	atTag := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.1.0"}, Settings: vcs[:1]}
	devel := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: vcs}
	for _, c := range []struct {
		name            string
		stamped, commit string
		release         bool
		bi              *debug.BuildInfo
		want            Info
	}{
		{"make release stamps the bare number", "0.1.0", "abc123", true, local, Info{Version: "0.1.0", Commit: "abc123", Go: "go1.26.0"}},
		{"make build is a development build", "0.1.0", "0123456789abcdef", false, local,
			Info{Version: "0.1.0-dev+0123456789ab", Commit: "0123456789abcdef", Go: "go1.26.0"}},
		{"go install of a published version", "", "", false, installed, Info{Version: "0.2.0", Commit: "unknown", Go: "go1.26.0"}},
		{"go build in a checkout", "", "", false, local, Info{Version: base + "-dev+0123456789ab-dirty",
			Commit: "0123456789abcdef0123456789abcdef01234567-dirty", Go: "go1.26.0"}},
		{"go build at a release tag", "", "", false, atTag, Info{Version: base + "-dev+0123456789ab",
			Commit: "0123456789abcdef0123456789abcdef01234567", Go: "go1.26.0"}},
		{"go build before Go 1.24", "", "", false, devel, Info{Version: base + "-dev+0123456789ab-dirty",
			Commit: "0123456789abcdef0123456789abcdef01234567-dirty", Go: "go1.26.0"}},
		{"a pre-release in VERSION", "0.2.0-rc.1", "abc", false, nil, Info{Version: "0.2.0-rc.1.dev+abc", Commit: "abc"}},
		{"no build information", "", "", false, nil, Info{Version: base + "-dev", Commit: "unknown"}},
	} {
		got := get(c.stamped, c.commit, c.release, c.bi)
		got.Platform = ""
		if c.want.Go == "" {
			c.want.Go = got.Go
		}
		if got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
		if !semver.MatchString(got.Version) {
			t.Errorf("%s: %q is not a semantic version", c.name, got.Version)
		}
	}
}

func TestForms(t *testing.T) {
	i := Info{Version: "0.1.0", Commit: "0123456789abcdef", Go: "go1.26.0", Platform: "linux/arm64"}
	if got, want := i.String(), "drainpipe 0.1.0 (commit 0123456789abcdef, go1.26.0, linux/arm64)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := i.UserAgent(), "drainpipe/0.1.0 (linux/arm64) 0123456789ab"; got != want {
		t.Errorf("UserAgent() = %q, want %q", got, want)
	}
	i.Commit = unknown
	if got, want := i.UserAgent(), "drainpipe/0.1.0 (linux/arm64)"; got != want {
		t.Errorf("UserAgent() without a commit = %q, want %q", got, want)
	}
	if got, want := i.AppID(), "drainpipe#0.1.0"; got != want {
		t.Errorf("AppID() = %q, want %q", got, want)
	}
}

func TestShort(t *testing.T) {
	for c, want := range map[string]string{
		"0123456789ab":         "0123456789ab",
		"0123456789abc":        "0123456789ab",
		"0123456789a":          "0123456789a",
		"0123456789abcd-dirty": "0123456789ab-dirty",
		"abc-dirty":            "abc-dirty",
	} {
		if got := short(c); got != want {
			t.Errorf("short(%q) = %q, want %q", c, got, want)
		}
	}
}

// The test binary is no release and no published module: a development
// version of the embedded number.
func TestGetOfThisBuild(t *testing.T) {
	i := Get()
	if !strings.HasPrefix(i.Version, strings.TrimSpace(file)+"-dev") || !semver.MatchString(i.Version) || i.Commit == "" ||
		i.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("Get() = %+v, want a development version of %s", i, strings.TrimSpace(file))
	}
}

// A build that stamped its commit keeps it as stamped, dirty tree or not;
// a dirty tree without a recorded commit stays unknown.
func TestStampedCommitNotMarkedDirty(t *testing.T) {
	dirty := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}}
	if got := get("0.1.0", "abc", true, dirty); got.Commit != "abc" {
		t.Errorf("stamped commit became %q", got.Commit)
	}
	if got := get("0.1.0", "", true, dirty); got.Commit != unknown {
		t.Errorf("no commit, dirty tree: commit %q, want %q", got.Commit, unknown)
	}
	clean := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}}
	if got := get("0.1.0", "", true, clean); got.Commit != "abc" || got.Version != "0.1.0" {
		t.Errorf("clean tree: %+v", got)
	}
	if got := get("v0.1.0", "", true, nil); got.Version != "0.1.0" {
		t.Errorf("a leading v kept: %q", got.Version)
	}
}
