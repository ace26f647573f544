package stack

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// VersionTag is the tag every taggable resource of the stack carries, so an
// operator can tell which Drainpipe release a queue or function belongs to.
const VersionTag = "drainpipe:version"

// TagVersion tags scope's resources with the version the bootstrap
// reports, which `make build` writes beside it (dist/bootstrap.version:
// VERSION-dev+COMMIT, or the bare number in a release); without that
// file, the repository's internal/version/VERSION.
func TagVersion(scope constructs.Construct, root string) error {
	b, err := os.ReadFile(filepath.Join(root, "dist", "bootstrap.version"))
	if errors.Is(err, fs.ErrNotExist) {
		b, err = os.ReadFile(filepath.Join(root, "internal", "version", "VERSION"))
	}
	if err != nil {
		return fmt.Errorf("reading the version: %w", err)
	}
	awscdk.Tags_Of(scope).Add(jsii.String(VersionTag), jsii.String(strings.TrimSpace(string(b))), nil)
	return nil
}
