package version

import (
	"regexp"
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

// A test binary is no release build; the User-Agent names the version and
// platform, with the commit when known; the SDK's app id is the version.
func TestUserAgentAndAppID(t *testing.T) {
	if v := Get().Version; !strings.Contains(v, "-dev") && !strings.Contains(v, ".dev") {
		t.Errorf("a test binary reports %q, a release's version", v)
	}
	i := Info{Version: "0.1.0", Commit: "0123456789abcdef", Platform: "linux/arm64"}
	if got := i.UserAgent(); got != "drainpipe/0.1.0 (linux/arm64) 0123456789ab" {
		t.Errorf("UserAgent = %q", got)
	}
	i.Commit = unknown
	if got := i.UserAgent(); got != "drainpipe/0.1.0 (linux/arm64)" {
		t.Errorf("UserAgent without a commit = %q", got)
	}
	if got := i.AppID(); got != "drainpipe#0.1.0" {
		t.Errorf("AppID = %q", got)
	}
}
