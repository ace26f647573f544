package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// reader reads variables and collects their errors.
type reader struct {
	getenv func(string) string
	errs   []error
}

func (r *reader) check(name string, err error) {
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s: %w", name, err))
	}
}

// parse calls set with the value of Prefix+name when it is set.
func (r *reader) parse(name string, set func(string) error) {
	if v := strings.TrimSpace(r.getenv(Prefix + name)); v != "" {
		r.check(Prefix+name, set(v))
	}
}

func (r *reader) boolean(name string, dst *bool) {
	r.parse(name, func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
		*dst = b
		return nil
	})
}

func (r *reader) positiveInt(name string, dst *int) {
	r.parse(name, func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("want a positive integer, got %q", v)
		}
		*dst = n
		return nil
	})
}

func (r *reader) positiveDuration(name string, dst *time.Duration) {
	r.parse(name, func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("want a positive duration such as 90s or 5m, got %q", v)
		}
		*dst = d
		return nil
	})
}

func (r *reader) duration(name string, dst *time.Duration) {
	r.parse(name, func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("want a duration such as 90s or 1h, got %q", v)
		}
		*dst = d
		return nil
	})
}

// durationUpTo reads a duration from 0 to most, rounded to whole seconds;
// example shows the form in the error.
func (r *reader) durationUpTo(name, example string, most time.Duration, dst *time.Duration) {
	r.parse(name, func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("want a duration such as %s, got %q", example, v)
		}
		if d < 0 || d > most {
			return fmt.Errorf("%s is outside 0–%s", d, most)
		}
		*dst = d.Round(time.Second)
		return nil
	})
}

func parseRetryDelay(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > MaxRetryDelay {
		return 0, fmt.Errorf("want a duration from 0 to %s, such as 15s, got %q", MaxRetryDelay, v)
	}
	return d, nil
}

// clusterName is EKS's rule for cluster names.
var clusterName = pattern{regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9_-]*$`), 100}

func parseClusters(v string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, name := range strings.Split(v, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !clusterName.MatchString(name) {
			return nil, fmt.Errorf("malformed cluster name %q", name)
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out, nil
}

// parseEndpoints reads "name=https://host[:port],name2=...".
func parseEndpoints(v string) (map[string]string, error) {
	out := map[string]string{}
	for _, pair := range strings.Split(v, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		name, endpoint, ok := strings.Cut(pair, "=")
		if !ok || !clusterName.MatchString(name) {
			return nil, fmt.Errorf("want name=URL pairs, got %q", pair)
		}
		if err := checkEndpointURL(name, endpoint); err != nil {
			return nil, err
		}
		out[name] = endpoint
	}
	return out, nil
}

// parseTag reads "key" or "key=value" (EC2 allows up to 128 and 256
// characters).
func parseTag(v string) (Tag, error) {
	key, value, hasValue := strings.Cut(v, "=")
	if key == "" || len(key) > 128 || len(value) > 256 {
		return Tag{}, fmt.Errorf("want key or key=value, got %q", v)
	}
	return Tag{Key: key, Value: value, AnyValue: !hasValue}, nil
}

func parseQPS(v string) (float32, error) {
	f, err := strconv.ParseFloat(v, 32)
	if err != nil || f <= 0 {
		return 0, fmt.Errorf("want a positive number, got %q", v)
	}
	return float32(f), nil
}

func parseTaintEffect(v string) (string, error) {
	switch v {
	case "NoSchedule", "PreferNoSchedule":
		return v, nil
	case "NoExecute":
		return "", fmt.Errorf("NoExecute is refused: the taint manager would delete every pod on the node at once, " +
			"ignoring PodDisruptionBudgets, eviction waves and the deadline's grace clamp, even for a cordon-only event; " +
			"use NoSchedule or PreferNoSchedule")
	}
	return "", fmt.Errorf("want NoSchedule or PreferNoSchedule, got %q", v)
}

// parseRate reads a rate per second: 0 (off) to 100000.
func parseRate(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 100000 {
		return 0, fmt.Errorf("want requests per second from 0 (unpaced) to 100000, got %q", v)
	}
	return n, nil
}
