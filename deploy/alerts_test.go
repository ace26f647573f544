package deploy_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/drainpipe/drainpipe/test/stackalarms"
)

// exporterSeries are the Prometheus series deploy/cloudwatch-exporter.yaml
// makes: aws_<namespace>_<metric>_<statistic>, snake case, as
// cloudwatch_exporter names them.
func exporterSeries(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("cloudwatch-exporter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Metrics []struct {
			Namespace string   `json:"aws_namespace"`
			Name      string   `json:"aws_metric_name"`
			Stats     []string `json:"aws_statistics"`
		} `json:"metrics"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range cfg.Metrics {
		for _, s := range m.Stats {
			out = append(out, snake(m.Namespace)+"_"+snake(m.Name)+"_"+snake(s))
		}
	}
	return out
}

var upperRE = regexp.MustCompile(`([a-z0-9])([A-Z])`)

func snake(s string) string {
	return strings.ToLower(strings.NewReplacer("/", "_").Replace(upperRE.ReplaceAllString(s, "${1}_${2}")))
}

// TestAlertRulesMatchTheAlarms: deploy/prometheus-alerts.yaml has one rule
// per alarm of the stack (label alarm: NAME), each reading only series the
// exporter configuration makes, filtered on the stack, queue or function.
func TestAlertRulesMatchTheAlarms(t *testing.T) {
	b, err := os.ReadFile("prometheus-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				For         string            `json:"for"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(b, &rules); err != nil {
		t.Fatalf("prometheus-alerts.yaml: %v", err)
	}
	series := exporterSeries(t)
	seriesRE := regexp.MustCompile(`\b(aws_[a-z_]+|drainpipe_[a-z_]+)\{`)
	covered := map[string]bool{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			covered[r.Labels["alarm"]] = true
			if r.Annotations["summary"] == "" || r.Annotations["runbook"] == "" {
				t.Errorf("rule %s: want a summary and a runbook", r.Alert)
			}
			used := seriesRE.FindAllStringSubmatch(r.Expr, -1)
			if len(used) == 0 {
				t.Errorf("rule %s reads no series: %s", r.Alert, r.Expr)
			}
			for _, u := range used {
				if !slices.Contains(series, u[1]) {
					t.Errorf("rule %s reads %s, which the exporter configuration does not make", r.Alert, u[1])
				}
			}
			if !strings.Contains(r.Expr, `stack="`) && !strings.Contains(r.Expr, `queue_name="`) && !strings.Contains(r.Expr, `queue_name=~"`) && !strings.Contains(r.Expr, `function_name=~"`) {
				t.Errorf("rule %s: not filtered on the deployment: %s", r.Alert, r.Expr)
			}
		}
	}
	alarms, err := stackalarms.Read("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range alarms {
		if a.CloudWatch && !covered[a.Name] {
			t.Errorf("alarm %s has no rule (labels: alarm: %s) in prometheus-alerts.yaml", a.Name, a.Name)
		}
	}
}

// TestExporterReadsWhatTheAlarmsWatch: the exporter configuration reads
// the function's errors and throttles and the work queue's visible
// messages, which the stack's alarms watch.
func TestExporterReadsWhatTheAlarmsWatch(t *testing.T) {
	series := exporterSeries(t)
	for _, want := range []string{"aws_lambda_errors_sum", "aws_lambda_throttles_sum", "aws_sqs_approximate_number_of_messages_visible_minimum"} {
		if !slices.Contains(series, want) {
			t.Errorf("the exporter makes no %s", want)
		}
	}
}

// TestDashboardOneVariable: the dashboard graphs what the alarms watch
// (the queue's visible messages, not its oldest message's age, which a
// held record raises by design), and the operator picks the stack only:
// the queues and the function follow from its name.
func TestDashboardOneVariable(t *testing.T) {
	b, err := os.ReadFile("grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Templating struct {
			List []struct {
				Name  string
				Type  string
				Hide  int
				Regex string
			}
		}
		Panels []struct {
			Title   string
			Targets []struct{ Namespace, MetricName string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	for _, v := range d.Templating.List {
		switch v.Name {
		case "datasource", "region", "stack":
			if v.Hide != 0 {
				t.Errorf("variable %s is hidden: the operator picks it", v.Name)
			}
		default:
			if v.Hide != 2 || !strings.Contains(v.Regex, "${stack}") || v.Type != "query" {
				t.Errorf("variable %s (%s, hide %d, regex %q): want a hidden query following ${stack}", v.Name, v.Type, v.Hide, v.Regex)
			}
		}
	}
	read := map[string]bool{}
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			read[q.Namespace+"/"+q.MetricName] = true
		}
	}
	if read["AWS/SQS/ApproximateAgeOfOldestMessage"] {
		t.Error("a panel graphs the queue's oldest message age, which no alarm watches")
	}
	for _, want := range []string{"AWS/SQS/ApproximateNumberOfMessagesVisible", "AWS/Lambda/Errors", "AWS/Lambda/Throttles"} {
		if !read[want] {
			t.Errorf("no panel graphs %s", want)
		}
	}
}
