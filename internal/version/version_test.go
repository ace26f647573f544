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
	local := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}, {Key: "vcs.modified", Value: "true"},
	}}
	for _, c := range []struct {
		name            string
		stamped, commit string
		bi              *debug.BuildInfo
		want            Info
	}{
		{"make build stamps both", "0.1.0", "abc123", local, Info{Version: "0.1.0", Commit: "abc123", Go: "go1.26.0"}},
		{"go install of a tag", "", "", installed, Info{Version: "0.2.0", Commit: "unknown", Go: "go1.26.0"}},
		{"go build in a checkout", "", "", local, Info{Version: base, Commit: "0123456789abcdef0123456789abcdef01234567-dirty", Go: "go1.26.0"}},
		{"no build information", "", "", nil, Info{Version: base, Commit: "unknown"}},
	} {
		got := get(c.stamped, c.commit, c.bi)
		got.Platform = ""
		if c.want.Go == "" {
			c.want.Go = got.Go
		}
		if got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestUserAgentAndAppID(t *testing.T) {
	in := Info{Version: "0.1.0", Commit: "0123456789abcdef-dirty", Go: "go1.26.0", Platform: "linux/arm64"}
	if got, want := in.UserAgent(), "drainpipe/0.1.0 (linux/arm64) 0123456789ab-dirty"; got != want {
		t.Errorf("UserAgent %q, want %q", got, want)
	}
	if got, want := in.AppID(), "drainpipe#0.1.0"; got != want {
		t.Errorf("AppID %q, want %q", got, want)
	}
	if got, want := in.String(), "drainpipe 0.1.0 (commit 0123456789abcdef-dirty, go1.26.0, linux/arm64)"; got != want {
		t.Errorf("String %q, want %q", got, want)
	}
}

func TestUserAgentWithoutCommit(t *testing.T) {
	in := Info{Version: "0.1.0", Commit: "unknown", Platform: "linux/arm64"}
	if got, want := in.UserAgent(), "drainpipe/0.1.0 (linux/arm64)"; got != want {
		t.Errorf("UserAgent %q, want %q", got, want)
	}
}
