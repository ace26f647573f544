package main

import (
	"fmt"
	"maps"
	"slices"
)

// nthMerged is what `drainpipe nth-values` prints for several files.
type nthMerged struct {
	Files []string `json:"files"`
	// Context holds the settings every file agrees on.
	Context map[string]any `json:"context"`
	// Conflicts are the settings the files differ on.
	Conflicts   []nthConflict   `json:"conflicts"`
	NotCarried  []nthFileGap    `json:"notCarried"`
	Unknown     []string        `json:"unknown"`
	NotInValues []nthAccountKey `json:"notInValues"`
	RetryWindow nthWindow       `json:"retryWindow"`
}

// nthConflict is a setting the files differ on: each file's value, null
// where a file leaves Drainpipe's default.
type nthConflict struct {
	Key    string         `json:"key"`
	Values map[string]any `json:"values"`
}

// nthFileGap is a value a file sets that Drainpipe does not carry.
type nthFileGap struct {
	File string `json:"file"`
	nthGap
}

// mergeNTH merges the files' translations: a context key (an env
// variable as env.NAME) set alike by every file is kept; one set
// differently, or by some files only, is a conflict.
func mergeNTH(files []string, results []nthResult) nthMerged {
	m := nthMerged{Files: files, Context: map[string]any{}, Conflicts: []nthConflict{}, NotCarried: []nthFileGap{},
		Unknown: []string{}, NotInValues: results[0].NotInValues}
	flat := make([]map[string]any, len(results))
	keys := map[string]bool{}
	for i, r := range results {
		flat[i] = flatContext(r.Context)
		for k := range flat[i] {
			keys[k] = true
		}
		for _, g := range r.NotCarried {
			m.NotCarried = append(m.NotCarried, nthFileGap{File: files[i], nthGap: g})
		}
		for _, u := range r.Unknown {
			if !slices.Contains(m.Unknown, u) {
				m.Unknown = append(m.Unknown, u)
			}
		}
	}
	slices.Sort(m.Unknown)
	env := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		values := map[string]any{}
		same := true
		for i, f := range flat {
			values[files[i]] = f[k]
			same = same && fmt.Sprint(f[k]) == fmt.Sprint(flat[0][k]) && (f[k] == nil) == (flat[0][k] == nil)
		}
		if !same {
			m.Conflicts = append(m.Conflicts, nthConflict{Key: k, Values: values})
			continue
		}
		if name, ok := cutEnv(k); ok {
			env[name], _ = flat[0][k].(string)
		} else {
			m.Context[k] = flat[0][k]
		}
	}
	if len(env) > 0 {
		m.Context["env"] = env
	}
	m.RetryWindow = (&nthResult{Context: m.Context}).window()
	return m
}

// flatContext lists a context's keys with its env variables as env.NAME.
func flatContext(ctx map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range ctx {
		if env, ok := v.(map[string]string); ok && k == "env" {
			for name, val := range env {
				out["env."+name] = val
			}
			continue
		}
		out[k] = v
	}
	return out
}

func cutEnv(k string) (string, bool) {
	if len(k) > 4 && k[:4] == "env." {
		return k[4:], true
	}
	return "", false
}
