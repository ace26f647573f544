package config

import "testing"

// A suggestion is at most a third of the name's suffix length away in
// edits; of two as near, the first known wins.
func TestClosestWithinAThird(t *testing.T) {
	known := []string{"DRAINPIPE_ABCDEFGHI", "DRAINPIPE_ABCDEFGHJ"}
	for name, want := range map[string]string{
		"DRAINPIPE_ABCDEFXYZ": "DRAINPIPE_ABCDEFGHI", // 3 edits of 9: a third
		"DRAINPIPE_ABCDEWXYZ": "",                    // 4 edits
		"DRAINPIPE_ABCDEFGHK": "DRAINPIPE_ABCDEFGHI", // 1 edit from both: the first
		"DRAINPIPE_ABCDEFGHJ": "DRAINPIPE_ABCDEFGHJ",
	} {
		if got := closest(name, known); got != want {
			t.Errorf("closest(%s) = %q, want %q", name, got, want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"kitten", "sitting", 3}, {"", "abc", 3}, {"abc", "", 3}, {"flaw", "lawn", 2}, {"abc", "abc", 0}, {"ab", "ba", 2},
	} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
