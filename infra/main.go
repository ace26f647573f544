// Command infra is Drainpipe's CDK app: `npx cdk synth` and `npx cdk deploy`
// at the repository root run it (see cdk.json). Props come from CDK context;
// the README lists the keys.
package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/drainpipe/drainpipe/infra/stack"
)

var stackName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]{0,127}$`)

func main() {
	stop := quietStderr()
	err := run(nil)
	jsii.Close()
	stderr := stop()
	if err != nil {
		fmt.Fprintln(stderr, "drainpipe infra:", err)
		os.Exit(1)
	}
}

// run synthesizes the app. defaults is context that the CLI's (cdk.json, -c)
// overrides; the tests pass it because the jsii runtime does not see later
// changes to the process environment.
func run(defaults map[string]any) error {
	root, err := projectRoot()
	if err != nil {
		return err
	}
	// The CLI passes its output directory relative to its own working
	// directory (the one with cdk.json), but cdk.json runs the app from infra/.
	outdir := os.Getenv("CDK_OUTDIR")
	if outdir == "" {
		outdir = "cdk.out"
	}
	if !filepath.IsAbs(outdir) {
		outdir = filepath.Join(root, outdir)
	}
	appProps := &awscdk.AppProps{Outdir: jsii.String(outdir)}
	if defaults != nil {
		appProps.Context = &defaults
	}
	app := awscdk.NewApp(appProps)
	get := func(key string) any { return app.Node().TryGetContext(jsii.String(key)) }
	warnUnknown(app.Node().GetAllContext(nil))
	props, ctxErr := stack.FromContext(get)
	// A relative asset directory is relative to the directory with cdk.json.
	if !filepath.IsAbs(props.AssetDir) {
		props.AssetDir = filepath.Join(root, props.AssetDir)
	}
	name := "Drainpipe"
	if v, ok := get("stackName").(string); ok && v != "" {
		name = v
	}
	// -c standalone=true: the template without bootstrap or asset
	// (make template); NewStandalone validates.
	standalone, _ := strconv.ParseBool(fmt.Sprint(get("standalone")))
	// -c maxClusters=N (standalone only): its Clusters parameter takes 1 to
	// N names; NewStandalone checks the range.
	var maxErr error
	if v := get("maxClusters"); v != nil {
		n, err := strconv.Atoi(fmt.Sprint(v))
		switch {
		case err != nil:
			maxErr = fmt.Errorf("maxClusters: %q is not a whole number", fmt.Sprint(v))
		case !standalone:
			maxErr = errors.New("maxClusters: only for the standalone template (-c standalone=true); the CDK stack has an access entry per cluster of clusters")
		default:
			props.MaxClusters = n
		}
	}
	// Every problem at once: a wrong context type, a bad stack name (CDK
	// would panic on it) and whatever Validate finds.
	var nameErr error
	if !stackName.MatchString(name) {
		nameErr = fmt.Errorf("stackName: %q is not a CloudFormation stack name (a letter, then letters, digits and '-', at most 128)", name)
	}
	var propsErr error
	if !standalone {
		propsErr = props.Validate()
	}
	if err := errors.Join(ctxErr, nameErr, propsErr, maxErr); err != nil {
		return err
	}
	build := func() (awscdk.Stack, error) { return stack.New(app, name, props, nil) }
	if standalone {
		build = func() (awscdk.Stack, error) { return stack.NewStandalone(app, name, props) }
	}
	st, err := build()
	if err != nil {
		return err
	}
	if err := stack.TagVersion(st, root); err != nil {
		return err
	}
	if on, _ := strconv.ParseBool(fmt.Sprint(get("nag"))); on {
		awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	}
	app.Synth(nil)
	return nil
}

// projectRoot walks up from the working directory to the one with cdk.json.
func projectRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the project root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "cdk.json")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding the project root: no cdk.json above the working directory")
		}
		dir = parent
	}
}

// warnUnknown flags context keys that look like ours but are not read,
// so a typo in cdk.json does not silently fall back to a default. CDK's own
// keys contain ':' (feature flags, lookups) or start with "aws:".
func warnUnknown(all any) {
	ctx, _ := all.(map[string]any)
	known := append(slices.Clone(stack.ContextKeys), "stackName", "nag", "standalone", "maxClusters", "cli-telemetry")
	for _, k := range slices.Sorted(maps.Keys(ctx)) {
		if !strings.Contains(k, ":") && !slices.Contains(known, k) {
			fmt.Fprintf(os.Stderr, "drainpipe infra: warning: context key %q is not used (known keys: %s)\n", k, strings.Join(known, ", "))
		}
	}
}
