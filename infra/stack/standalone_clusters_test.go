package stack

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
)

// TestStandaloneClusterRange: a template made with MaxClusters serves 1 to
// MaxClusters clusters from its Clusters parameter: deployed (as
// CloudFormation evaluates it) with one, two or four names, it has an
// access entry and an eks:DescribeCluster resource for each name given and
// no other, and the function serves exactly the names given. Clusters on
// aws-auth (by position) get no access entry.
func TestStandaloneClusterRange(t *testing.T) {
	p := testProps(t)
	p.AWSAuthClusters = []string{"staging"}
	p.MaxClusters = 4
	var tpl cfnTemplate
	if err := json.Unmarshal(standaloneJSON(t, p), &tpl); err != nil {
		t.Fatal(err)
	}
	if d := tpl.Parameters["Clusters"].Description; !strings.Contains(d, "1 to 4 name(s)") {
		t.Errorf("Clusters parameter: %q, want it to say 1 to 4 names", d)
	}
	for _, tt := range []struct {
		clusters string
		entries  []string // staging's position (2) is on aws-auth
		describe []string
	}{
		{"prod", []string{"prod"}, []string{"prod"}},
		{"prod,staging", []string{"prod"}, []string{"prod", "staging"}},
		{"a,b,c,d", []string{"a", "c", "d"}, []string{"a", "b", "c", "d"}},
	} {
		t.Run(tt.clusters, func(t *testing.T) {
			e := evaluator{tpl: tpl, params: map[string]string{"Clusters": tt.clusters}}
			var entries, describe []string
			for _, r := range tpl.Resources {
				if r.Condition != "" && !e.condition(r.Condition) {
					continue
				}
				switch r.Type {
				case "AWS::EKS::AccessEntry":
					entries = append(entries, fmt.Sprint(e.eval(r.Properties["ClusterName"])))
				case "AWS::IAM::Policy":
					for _, st := range r.Properties["PolicyDocument"].(map[string]any)["Statement"].([]any) {
						if st.(map[string]any)["Sid"] == "DescribeClusters" {
							for _, arn := range e.eval(st.(map[string]any)["Resource"]).([]any) {
								describe = append(describe, fmt.Sprint(arn)[strings.LastIndex(fmt.Sprint(arn), "/")+1:])
							}
						}
					}
				case "AWS::Lambda::Function":
					vars := r.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
					if got := e.eval(vars["DRAINPIPE_CLUSTERS"]); got != tt.clusters {
						t.Errorf("DRAINPIPE_CLUSTERS = %v, want %s", got, tt.clusters)
					}
				}
			}
			slices.Sort(entries)
			describe = slices.Compact(slices.Sorted(slices.Values(describe)))
			if !slices.Equal(entries, tt.entries) {
				t.Errorf("access entries for %v, want %v", entries, tt.entries)
			}
			if !slices.Equal(describe, tt.describe) {
				t.Errorf("eks:DescribeCluster on %v, want %v", describe, tt.describe)
			}
		})
	}
}

func TestStandaloneMaxClustersChecked(t *testing.T) {
	for _, max := range []int{1, MaxTemplateClusters + 1} {
		p := testProps(t) // two clusters
		p.MaxClusters = max
		if _, err := NewStandalone(awscdk.NewApp(nil), "Standalone", p); err == nil || !strings.Contains(err.Error(), "maxClusters") {
			t.Errorf("maxClusters %d: %v, want it refused", max, err)
		}
	}
}

// standaloneJSON is the standalone template of p, as written to a file.
func standaloneJSON(t *testing.T, p Props) []byte {
	t.Helper()
	s, err := NewStandalone(awscdk.NewApp(nil), "Standalone", p)
	if err != nil {
		t.Fatalf("NewStandalone: %v", err)
	}
	raw, err := json.Marshal(assertions.Template_FromStack(s, nil).ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// cfnTemplate is a template as CloudFormation reads it.
type cfnTemplate struct {
	Resources  map[string]resource
	Conditions map[string]any
	Parameters map[string]struct{ Description string }
}

// evaluator evaluates the intrinsic functions the cluster positions use,
// for given parameter values, as CloudFormation does at deploy time.
type evaluator struct {
	tpl    cfnTemplate
	params map[string]string
}

// noValue is AWS::NoValue: dropped from the list that holds it.
type noValue struct{}

func (e evaluator) condition(name string) bool { return e.eval(e.tpl.Conditions[name]) == true }

func (e evaluator) eval(v any) any {
	switch v := v.(type) {
	case []any:
		var out []any
		for _, x := range v {
			if r := e.eval(x); r != (noValue{}) {
				out = append(out, r)
			}
		}
		return out
	case map[string]any:
		for fn, arg := range v {
			args, _ := arg.([]any)
			switch fn {
			case "Ref":
				switch id := arg.(string); {
				case id == "AWS::NoValue":
					return noValue{}
				case strings.HasPrefix(id, "AWS::"):
					return "${" + id + "}"
				case e.params[id] != "":
					if id == "Clusters" {
						return toAny(strings.Split(e.params[id], ","))
					}
					return e.params[id]
				}
				return "${" + arg.(string) + "}"
			case "Condition":
				return e.condition(arg.(string))
			case "Fn::Join":
				var parts []string
				for _, p := range e.eval(args[1]).([]any) {
					parts = append(parts, fmt.Sprint(p))
				}
				return strings.Join(parts, args[0].(string))
			case "Fn::Split":
				return toAny(strings.Split(fmt.Sprint(e.eval(args[1])), args[0].(string)))
			case "Fn::Select":
				i, _ := strconv.Atoi(fmt.Sprint(args[0]))
				return e.eval(args[1]).([]any)[i]
			case "Fn::If":
				if e.condition(args[0].(string)) {
					return e.eval(args[1])
				}
				return e.eval(args[2])
			case "Fn::Equals":
				return fmt.Sprint(e.eval(args[0])) == fmt.Sprint(e.eval(args[1]))
			case "Fn::Not":
				return e.eval(args[0]) != true
			}
			return fmt.Sprintf("${%s}", fn)
		}
	}
	return v
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}
