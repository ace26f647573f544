// Package version is Drainpipe's one version. The number lives in the file
// VERSION beside this one (embedded). Only a release build reports it bare:
// `make release` stamps it, the commit and release=true with -ldflags -X
// (see Get), and `go install ...@vX.Y.Z` of a published version records it
// as the module's. Every other build (`make build`, a plain `go build` or
// `go install ./cmd/drainpipe` in a checkout) reports a development
// version, VERSION-dev+COMMIT, so it is never mistaken for the release.
// VERSION is the number of the release the tree leads up to (bumped right
// after each release), so a development version sorts after every release
// and before the next.
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

// Set at link time: -X github.com/drainpipe/drainpipe/internal/version.version=0.1.0,
// ...version.commit=<git hash> and, by `make release` only,
// ...version.release=true. Empty otherwise.
var (
	version string
	commit  string
	release string
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

// Get reports this build's version: the stamped one (bare in a release
// build), else the module version a `go install ...@vX.Y.Z` recorded, else
// VERSION; all but a release's and a published module's as a development
// version of the commit the build recorded.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return get(version, commit, release == "true", bi)
}

func get(stamped, stampedCommit string, isRelease bool, bi *debug.BuildInfo) Info {
	in := Info{Version: stamped, Commit: stampedCommit, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	published := false
	if bi != nil {
		var dirty, vcs bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				vcs = true
				if in.Commit == "" {
					in.Commit = s.Value
				}
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		// A build in a checkout records a version derived from the tags
		// (Go 1.24 on), at a tag the bare number; only a module fetched by
		// version, which records no VCS settings, is that version.
		if v := bi.Main.Version; in.Version == "" && !vcs && v != "" && v != "(devel)" {
			in.Version, published = v, true
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
	if !isRelease && !published {
		in.Version = development(in.Version, in.Commit)
	}
	return in
}

// development is the version of a build between releases: the number it
// leads up to, marked dev, with the commit as semver build metadata.
func development(v, commit string) string {
	v, _, _ = strings.Cut(v, "+")
	if strings.Contains(v, "-") {
		v += ".dev" // already a pre-release: 0.2.0-rc.1.dev
	} else {
		v += "-dev"
	}
	if commit == unknown {
		return v
	}
	return v + "+" + short(commit)
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
