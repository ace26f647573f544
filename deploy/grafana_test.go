package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/drainpipe/drainpipe/internal/metrics"
)

// sqsMetrics are the AWS/SQS metrics the dashboard and exporter read, as
// the stack's own CloudWatch dashboard and alarms do, by queue name.
var sqsMetrics = []string{"ApproximateNumberOfMessagesVisible"}

// cordonLagMetric is what CordonLagAlarm watches on the cordon queue: the
// exporter reads it for the alert rule; no panel graphs a queue's oldest
// message age (TestDashboardOneVariable).
const cordonLagMetric = "ApproximateAgeOfOldestMessage"

// lambdaMetrics are the function's own Lambda metrics the stack alarms on.
var lambdaMetrics = []string{"Errors", "Throttles"}

// checkQuery reports what is wrong with one read of metric name in ns
// under dimension keys dims: a Drainpipe metric the function does not
// write, or a dimension set it is not published under (CloudWatch answers
// such a query with nothing, not an error), or one not filtered on the
// deployment's stack dimension.
func checkQuery(catalog map[string]metrics.Published, ns, name string, dims []string) error {
	switch ns {
	case metrics.Namespace:
		p, ok := catalog[name]
		if !ok {
			return fmt.Errorf("metric %s/%s: the function writes no such metric", ns, name)
		}
		if !slices.Contains(dims, metrics.DimStack) {
			return fmt.Errorf("metric %s: not filtered on dimension %s, so deployments mix", name, metrics.DimStack)
		}
		rest := slices.DeleteFunc(slices.Clone(dims), func(d string) bool { return d == metrics.DimStack })
		sort.Strings(rest)
		for _, set := range p.Dimensions {
			if slices.Equal(slices.Sorted(slices.Values(set)), rest) {
				return nil
			}
		}
		return fmt.Errorf("metric %s: dimensions %v (with %s), published only under %v", name, rest, metrics.DimStack, p.Dimensions)
	case "AWS/SQS":
		if !slices.Contains(append(slices.Clone(sqsMetrics), cordonLagMetric), name) || !slices.Equal(dims, []string{"QueueName"}) {
			return fmt.Errorf("metric %s/%s by %v: want one of %v by QueueName", ns, name, dims, sqsMetrics)
		}
		return nil
	case "AWS/Lambda":
		if !slices.Contains(lambdaMetrics, name) || !slices.Equal(dims, []string{"FunctionName"}) {
			return fmt.Errorf("metric %s/%s by %v: want one of %v by FunctionName", ns, name, dims, lambdaMetrics)
		}
		return nil
	}
	return fmt.Errorf("metric %s/%s: unexpected namespace", ns, name)
}

func catalogByName() map[string]metrics.Published {
	m := map[string]metrics.Published{}
	for _, p := range metrics.Catalog() {
		m[p.Name] = p
	}
	return m
}

type grafanaDashboard struct {
	Templating struct {
		List []struct{ Name, Type string }
	}
	Panels []struct {
		Title   string
		Targets []struct {
			Namespace, MetricName, Statistic, Region string
			Dimensions                               map[string]string
		}
	}
}

// TestGrafanaDashboard checks deploy/grafana-dashboard.json: every metric a
// panel reads in namespace Drainpipe is one the function writes, under a
// dimension set it publishes, filtered on the $stack variable; the SQS
// panels read the queues' own metrics; the variables the queries use
// exist; and the panels cover what the stack's CloudWatch dashboard shows.
func TestGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile("grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars["$"+v.Name] = true
	}
	for _, want := range []string{"$datasource", "$region", "$stack", "$queue", "$dlq", "$function"} {
		if !vars[want] {
			t.Errorf("no template variable %s", want)
		}
	}
	catalog := catalogByName()
	read := map[string]bool{}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q reads nothing", p.Title)
		}
		for _, q := range p.Targets {
			dims := make([]string, 0, len(q.Dimensions))
			for k, v := range q.Dimensions {
				dims = append(dims, k)
				if strings.HasPrefix(v, "$") && !vars[v] {
					t.Errorf("panel %q: dimension %s=%s, no such variable", p.Title, k, v)
				}
			}
			sort.Strings(dims)
			if err := checkQuery(catalog, q.Namespace, q.MetricName, dims); err != nil {
				t.Errorf("panel %q: %v", p.Title, err)
			}
			if q.Namespace == metrics.Namespace && q.Dimensions[metrics.DimStack] != "$stack" {
				t.Errorf("panel %q: %s filtered on stack=%q, want $stack", p.Title, q.MetricName, q.Dimensions[metrics.DimStack])
			}
			if q.Region != "$region" || q.Statistic == "" {
				t.Errorf("panel %q: %s has region %q and statistic %q, want $region and one set", p.Title, q.MetricName, q.Region, q.Statistic)
			}
			read[q.MetricName] = true
		}
	}
	for _, want := range append([]string{metrics.MetricRecords, metrics.MetricQueueLatency, metrics.MetricDrainDuration,
		metrics.MetricDeadlineHit, metrics.MetricDrainBlockedFor, metrics.MetricPodsBlocked, metrics.MetricSweepRepairs,
		metrics.MetricErrors, metrics.MetricHookCompletions}, sqsMetrics...) {
		if !read[want] {
			t.Errorf("no panel reads %s", want)
		}
	}
}

// TestCloudWatchExporterConfig checks deploy/cloudwatch-exporter.yaml
// (prometheus/cloudwatch_exporter) the same way: each entry names a
// metric the function writes, with the exact dimension set it is
// published under (the exporter matches the set exactly), and a statistic;
// together they read every metric. The snippet in docs/operations.md
// is checked entry by entry.
func TestCloudWatchExporterConfig(t *testing.T) {
	b, err := os.ReadFile("cloudwatch-exporter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	read := checkExporter(t, "cloudwatch-exporter.yaml", b)
	for _, p := range metrics.Catalog() {
		if !read[p.Name] {
			t.Errorf("the exporter does not read %s", p.Name)
		}
	}
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	snippets := 0
	for i, block := range strings.Split(string(doc), "```yaml\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if strings.Contains(block, "aws_namespace") {
			snippets++
			checkExporter(t, fmt.Sprintf("docs/operations.md yaml block %d", i+1), []byte(block))
		}
	}
	if snippets == 0 {
		t.Error("docs/operations.md shows no cloudwatch_exporter snippet")
	}
}

// checkExporter checks one cloudwatch_exporter configuration and returns
// the metric names it reads.
func checkExporter(t *testing.T, name string, b []byte) map[string]bool {
	t.Helper()
	var cfg struct {
		Region  string `json:"region"`
		Period  int    `json:"period_seconds"`
		Delay   int    `json:"delay_seconds"`
		Metrics []struct {
			Namespace string              `json:"aws_namespace"`
			Name      string              `json:"aws_metric_name"`
			Dims      []string            `json:"aws_dimensions"`
			Select    map[string][]string `json:"aws_dimension_select"`
			Regex     map[string][]string `json:"aws_dimension_select_regex"`
			Stats     []string            `json:"aws_statistics"`
			Extended  []string            `json:"aws_extended_statistics"`
		} `json:"metrics"`
	}
	if err := yaml.UnmarshalStrict(b, &cfg); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if cfg.Region == "" || len(cfg.Metrics) == 0 {
		t.Fatalf("%s: want a region and metrics", name)
	}
	catalog := catalogByName()
	read := map[string]bool{}
	for _, m := range cfg.Metrics {
		if err := checkQuery(catalog, m.Namespace, m.Name, slices.Sorted(slices.Values(m.Dims))); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if len(m.Stats)+len(m.Extended) == 0 {
			t.Errorf("%s: metric %s: no statistic", name, m.Name)
		}
		if m.Namespace == metrics.Namespace && len(m.Select[metrics.DimStack]) == 0 {
			t.Errorf("%s: metric %s: no aws_dimension_select on %s, so deployments mix", name, m.Name, metrics.DimStack)
		}
		read[m.Name] = true
	}
	return read
}
