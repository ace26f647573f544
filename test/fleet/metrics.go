package fleet

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// Metrics is one read of the API server's /metrics.
type Metrics []byte

// ScrapeMetrics reads the API server's metrics (Prometheus text format).
func ScrapeMetrics(ctx context.Context, c kubernetes.Interface) (Metrics, error) {
	raw, err := c.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	return raw, nil
}

// Sum adds up the samples of metric name (a histogram's name_sum or
// name_count too) by the value of their label by; by "" adds them all
// up under "".
func (m Metrics) Sum(name, by string) (map[string]float64, error) {
	out := map[string]float64{}
	err := m.each(name, func(line string, v float64) {
		key := ""
		if by != "" {
			key = label(line, by)
		}
		out[key] += v
	})
	return out, err
}

// each calls f with every sample line of the metric name and its value.
func (m Metrics) each(name string, f func(line string, v float64)) error {
	sc := bufio.NewScanner(bytes.NewReader(m))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return fmt.Errorf("reading %q: %w", line, err)
		}
		f(line, v)
	}
	return sc.Err()
}

// label is the value of a Prometheus label in a sample line.
func label(line, name string) string {
	i := strings.Index(line, name+`="`)
	if i < 0 {
		return ""
	}
	rest := line[i+len(name)+2:]
	return rest[:max(0, strings.IndexByte(rest, '"'))]
}
