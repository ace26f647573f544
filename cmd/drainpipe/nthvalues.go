package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

const nthUsage = `usage: drainpipe nth-values VALUES.yaml [VALUES.yaml]...

Reads the values file of an aws-node-termination-handler Helm release
(chart 0.27, queue-processor mode) and prints, as JSON, the stack context
that makes Drainpipe behave like it ("context": keys for cdk.json's
"context" or -c, "env" among them) and every value Drainpipe cannot carry,
with why ("notCarried"). Values the file leaves out take the chart's
defaults, as Helm does, so an empty file shows how NTH's defaults differ
from Drainpipe's. Keys the chart does not know are listed under "unknown".
What the values cannot say, the Auto Scaling groups and lifecycle hook
names NTH serves, is listed under "notInValues": set those keys yourself.
The mapping of every value: docs/migrating-from-nth.md.

With several files (one per cluster a stack is to serve) it prints the
context they agree on, and under "conflicts" each setting on which they
differ, with each file's value: one stack applies one policy to all its
clusters.

Exits 0 when the file was read, 2 when it cannot be read or parsed or a
value has the wrong type (cordonOnly: "yes please"; every one is listed).`

// nthResult is what `drainpipe nth-values` prints.
type nthResult struct {
	Context    map[string]any `json:"context"`
	NotCarried []nthGap       `json:"notCarried"`
	Unknown    []string       `json:"unknown"`
	managedTag string         // the tag checkTagBeforeDraining checks
	defaults   map[string]any // the chart's

	// NotInValues are context keys the values cannot fill (nthaccount.go).
	NotInValues []nthAccountKey `json:"notInValues"`
	// RetryWindow is how long a blocked drain keeps its hook with the
	// context (nthwindow.go): NTH's heartbeatUntil.
	RetryWindow nthWindow `json:"retryWindow"`
}

// nthGap is one NTH value Drainpipe does not carry.
type nthGap struct {
	Value string `json:"value"`
	Set   any    `json:"set"`
	Why   string `json:"why"`
}

func (r *nthResult) env(name, value string) {
	env, _ := r.Context["env"].(map[string]string)
	if env == nil {
		env = map[string]string{}
		r.Context["env"] = env
	}
	env[name] = value
}

func (r *nthResult) gap(value string, set any, why string) {
	r.NotCarried = append(r.NotCarried, nthGap{Value: value, Set: set, Why: why})
}

// nthValues is `drainpipe nth-values`.
func nthValues(_ context.Context, c cli, args []string) int {
	fs := newFlags(c, "nth-values", nthUsage)
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(c.Stderr, "drainpipe nth-values: "+format+"\n", a...)
		return code
	}
	if len(rest) == 0 {
		return fail(exitUsage, "want one values file or more, got none")
	}
	var results []nthResult
	for _, f := range rest {
		res, code := nthFile(c, f, fail)
		if code >= 0 {
			return code
		}
		results = append(results, res)
	}
	var doc any = results[0]
	if len(results) > 1 {
		m := mergeNTH(rest, results)
		if len(m.Conflicts) > 0 {
			fmt.Fprintf(c.Stderr, "drainpipe nth-values: the releases differ on %d settings one stack applies to all its "+
				"clusters (see conflicts): choose one value each, or deploy a stack per group of alike clusters\n", len(m.Conflicts))
		}
		doc = m
	}
	out := json.NewEncoder(c.Stdout)
	out.SetEscapeHTML(false)
	out.SetIndent("", "  ")
	if err := out.Encode(doc); err != nil {
		return fail(exitFail, "writing: %v", err)
	}
	s, _ := start(c, "nth-values", startSpec{})
	defer s.end()
	s.log.Warn(noteNotInValues(results[0].NotInValues))
	return exitOK
}

// nthFile translates one values file; code is -1 when it was read.
func nthFile(c cli, name string, fail func(int, string, ...any) int) (nthResult, int) {
	data, err := readInput(name, c.Stdin)
	if err != nil {
		return nthResult{}, fail(exitUsage, "%v", err)
	}
	var given map[string]any
	if err := yaml.Unmarshal(data, &given); err != nil {
		return nthResult{}, fail(exitUsage, "%s: %v", name, err)
	}
	res, err := translateNTH(given)
	if err != nil {
		return nthResult{}, fail(exitFail, "%v", err)
	}
	if problems := nthTypeProblems(given, res.defaults); len(problems) > 0 {
		return nthResult{}, fail(exitUsage, "%s: %d values of the wrong type, nothing translated:\n  %s", name, len(problems),
			strings.Join(problems, "\n  "))
	}
	return res, -1
}

// translateNTH maps NTH's values (given over the chart's defaults) to
// Drainpipe's context.
func translateNTH(given map[string]any) (nthResult, error) {
	defaults, err := nthDefaults()
	if err != nil {
		return nthResult{}, err
	}
	res := nthResult{Context: map[string]any{}, NotCarried: []nthGap{}, Unknown: []string{}, defaults: defaults,
		NotInValues: nthNotInValues()}
	vals := maps.Clone(res.defaults)
	for k, v := range given {
		if _, known := res.defaults[k]; !known {
			res.Unknown = append(res.Unknown, k)
			continue
		}
		if v != nil {
			vals[k] = v
		}
	}
	slices.Sort(res.Unknown)
	res.managedTag = fmt.Sprint(vals["managedTag"])
	rules := nthRules()
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		rules[k](&res, k, vals[k])
	}
	res.RetryWindow = res.window()
	return res, nil
}
