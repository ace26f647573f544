package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// licenceFile matches the files a module states its licence in.
var licenceFile = regexp.MustCompile(`(?i)^(licen[cs]e|copying)([-.].*)?$`)

// marker is a licence and phrases that only its text contains. Texts are
// compared lower-cased with runs of white space and markup made one space.
type marker struct {
	id      string
	has     []string
	lacks   []string
	pattern *regexp.Regexp
}

var markers = []marker{
	{id: "Apache-2.0", pattern: regexp.MustCompile(`apache license,? version 2\.0`)},
	{id: "MIT-0", has: []string{"mit no attribution", "permission is hereby granted, free of charge"}},
	// MIT-0 lacks MIT's notice clause, so the two never both match one text.
	{id: "MIT", has: []string{"permission is hereby granted, free of charge", "the above copyright notice and this permission notice shall be included"}},
	{id: "BSD-3-Clause", has: []string{"redistribution and use in source and binary forms", "may be used to endorse or promote products"}},
	{id: "BSD-2-Clause", has: []string{"redistribution and use in source and binary forms"}, lacks: []string{"may be used to endorse or promote products"}},
	{id: "ISC", has: []string{"permission to use, copy, modify, and/or distribute this software for any purpose"}},
	{id: "MPL-2.0", has: []string{"mozilla public license"}},
}

var space = regexp.MustCompile(`[\s#*>]+`)

func normalise(text string) string {
	return strings.TrimSpace(space.ReplaceAllString(strings.ToLower(text), " "))
}

// classify names the licences a text grants, in SPDX identifiers.
func classify(text string) []string {
	t := normalise(text)
	var ids []string
	for _, m := range markers {
		ok := m.pattern == nil || m.pattern.MatchString(t)
		for _, p := range m.has {
			ok = ok && strings.Contains(t, p)
		}
		for _, p := range m.lacks {
			ok = ok && !strings.Contains(t, p)
		}
		if ok {
			ids = append(ids, m.id)
		}
	}
	return ids
}

// detect reads a module's licence files and returns its licence as an SPDX
// expression. A module with none, or with a text none of the markers
// knows, is an error: a person must look at it.
func detect(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("reading module: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() || !licenceFile.MatchString(e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return "", fmt.Errorf("reading licence: %w", err)
		}
		found := classify(string(b))
		// A summary pointing at the other files grants nothing itself.
		if len(found) == 0 && !strings.Contains(strings.ToLower(e.Name()), "summary") {
			return "", fmt.Errorf("%s: licence not recognised", e.Name())
		}
		ids = append(ids, found...)
	}
	if len(ids) == 0 {
		return "", errors.New("no licence file")
	}
	slices.Sort(ids)
	return strings.Join(slices.Compact(ids), " AND "), nil
}
