// Package version is Drainpipe's one version. The number lives in the file
// VERSION beside this one (embedded); `make build` and `make release` also
// stamp it and the commit with -ldflags -X (see Stamp), and a `go install`
// build takes both from the module's build information instead.
package version

import (
	_ "embed"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

//go:embed VERSION
var file string

// Set at link time: -X github.com/drainpipe/drainpipe/internal/version.version=0.1.0
// and ...version.commit=<git hash>. Empty otherwise.
var (
	version string
	commit  string
)

const unknown = "unknown"

// Info is what a build knows about itself.
type Info struct {
	Version string // semver without a leading v: 0.1.0
	Commit  string // git commit, "unknown" when the build did not record it
	Go      string // the Go release it was built with
	// Platform is GOOS/GOARCH.
	Platform string
}

// Get reports this build's version: the stamped one, else the module
// version a `go install ...@vX.Y.Z` recorded, else VERSION.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return get(version, commit, bi)
}

func get(stamped, stampedCommit string, bi *debug.BuildInfo) Info {
	in := Info{Version: stamped, Commit: stampedCommit, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if v := bi.Main.Version; in.Version == "" && v != "" && v != "(devel)" {
			in.Version = v
		}
		var dirty bool
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && in.Commit == "":
				in.Commit = s.Value
			case s.Key == "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && stampedCommit == "" && in.Commit != "" {
			in.Commit += "-dirty"
		}
		if bi.GoVersion != "" {
			in.Go = bi.GoVersion
		}
	}
	if in.Version == "" {
		in.Version = strings.TrimSpace(file)
	}
	in.Version = strings.TrimPrefix(in.Version, "v")
	if in.Commit == "" {
		in.Commit = unknown
	}
	return in
}

// String is the one-line form `drainpipe version` prints.
func (i Info) String() string {
	return fmt.Sprintf("drainpipe %s (commit %s, %s, %s)", i.Version, i.Commit, i.Go, i.Platform)
}

// UserAgent is the Kubernetes client's User-Agent, so an API server's audit
// log names the version that evicted a pod: drainpipe/0.1.0 (linux/arm64) abcdef123456.
func (i Info) UserAgent() string {
	ua := fmt.Sprintf("drainpipe/%s (%s)", i.Version, i.Platform)
	if i.Commit != unknown {
		ua += " " + short(i.Commit)
	}
	return ua
}

// AppID is the AWS SDK's application id, sent in every AWS call's
// User-Agent as app/drainpipe#0.1.0 (the SDK turns a "/" into "-"; "#" is
// its own name-version separator) and so recorded by CloudTrail.
func (i Info) AppID() string { return "drainpipe#" + i.Version }

// short keeps 12 hex digits of a commit, and its -dirty mark.
func short(c string) string {
	hash, dirty := strings.CutSuffix(c, "-dirty")
	if len(hash) > 12 {
		hash = hash[:12]
	}
	if dirty {
		return hash + "-dirty"
	}
	return hash
}
