package config

import "regexp"

// pattern is a regular expression with its length limit checked apart: a
// counted repetition such as {1,255} compiles to hundreds of instructions,
// paid at every cold start before the first record.
type pattern struct {
	re  *regexp.Regexp
	max int
}

func (p pattern) MatchString(s string) bool { return len(s) <= p.max && p.re.MatchString(s) }

// validator is one of Kubernetes' own name checks (package validation,
// compiled once for client-go already) as a matcher.
type validator func(string) []string

func (v validator) MatchString(s string) bool { return len(v(s)) == 0 }
