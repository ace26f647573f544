package config

import (
	"fmt"
	"slices"
	"strings"
)

// Unknown is a DRAINPIPE_ variable that no setting reads: usually a typo,
// which would otherwise leave the default in force without a word.
type Unknown struct {
	Name string
	// Closest is the known name nearest in spelling, "" when none is near.
	Closest string
}

func (u Unknown) String() string {
	if u.Closest == "" {
		return u.Name + " is not a Drainpipe setting"
	}
	return fmt.Sprintf("%s is not a Drainpipe setting (did you mean %s?)", u.Name, u.Closest)
}

// UnknownNames returns the DRAINPIPE_ variables in environ ("NAME=value",
// as os.Environ gives them) that are not in Settings, sorted by name.
func UnknownNames(environ []string) []Unknown {
	var known []string
	for _, s := range Settings() {
		known = append(known, Prefix+s.Name)
	}
	var out []Unknown
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, Prefix) || slices.Contains(known, name) {
			continue
		}
		out = append(out, Unknown{Name: name, Closest: closest(name, known)})
	}
	slices.SortFunc(out, func(a, b Unknown) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// closest is the known name within a third of name's suffix length in
// edits, or "".
func closest(name string, known []string) string {
	best, bestDist := "", len(name[len(Prefix):])/3+1
	for _, k := range known {
		if d := distance(name, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
