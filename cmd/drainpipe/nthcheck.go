package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// nthTypeProblems lists every value of given whose type is not the
// chart's (cordonOnly: "yes please" where a boolean belongs): Helm's
// templates would read a non-empty string as true, and carrying it as
// false would be worse, so the file is refused instead.
func nthTypeProblems(given, defaults map[string]any) []string {
	var problems []string
	for _, k := range slices.Sorted(maps.Keys(given)) {
		v, def := given[k], defaults[k]
		if v == nil || def == nil {
			continue
		}
		if want, got := yamlKind(def), yamlKind(v); want != got {
			problems = append(problems, fmt.Sprintf("%s: %v is a %s, want a %s (the chart's default is %v)", k, v, got, want, def))
		}
	}
	return problems
}

// yamlKind names the kind of a decoded YAML value.
func yamlKind(v any) string {
	switch v.(type) {
	case bool:
		return "boolean"
	case float64, int, int64:
		return "number"
	case string:
		return "string"
	case []any:
		return "list"
	case map[string]any:
		return "map"
	}
	return fmt.Sprintf("%T", v)
}

// nthKubeQPS says how NTH's and Drainpipe's API rate limits differ.
const nthKubeQPS = "NTH's client allows 5 queries per second (burst 10) per pod unless raised; Drainpipe's is " +
	"per cluster per function environment, default 200 (burst 400), and up to context maxConcurrency environments " +
	"run at once, so the API server may see maxConcurrency × DRAINPIPE_KUBE_QPS: keep the default, or set env "

// nthExtraEnv maps the entries of extraEnv it knows to Drainpipe's
// settings, and says of the others that there is no equivalent.
func nthExtraEnv(res *nthResult, key string, v any) {
	list, _ := v.([]any)
	for _, e := range list {
		entry, _ := e.(map[string]any)
		name, value := fmt.Sprint(entry["name"]), entry["value"]
		where := key + "." + name
		switch strings.ToUpper(name) {
		case "KUBE_API_QPS":
			res.gap(where, value, nthKubeQPS+"DRAINPIPE_KUBE_QPS to lower it")
		case "KUBE_API_BURST":
			res.gap(where, value, nthKubeQPS+"DRAINPIPE_KUBE_BURST to lower the burst")
		case "AWS_REGION", "AWS_DEFAULT_REGION":
			res.gap(where, value, "deploy the stack in that region: one stack per account and region")
		case "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY":
			res.gap(where, value, "the function reaches AWS and the API servers directly (from a VPC: through its NAT or endpoints)")
		default:
			res.gap(where, value, "no Drainpipe equivalent: an environment variable of NTH's pod")
		}
	}
}
