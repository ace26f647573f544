package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
)

// ApplyFlowControl applies deploy/flowcontrol.yaml: Drainpipe's
// PriorityLevelConfigurations, then its FlowSchemas, in the file's order
// (the levels come first in it). It returns the schemas and the levels by
// name.
func ApplyFlowControl(ctx context.Context, c kubernetes.Interface, path string) ([]*flowcontrolv1.FlowSchema, map[string]*flowcontrolv1.PriorityLevelConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var levels []flowcontrolv1.PriorityLevelConfiguration
	var schemas []flowcontrolv1.FlowSchema
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		var meta metav1.TypeMeta
		if err == nil {
			err = json.Unmarshal(raw, &meta)
		}
		switch {
		case err != nil:
			return nil, nil, fmt.Errorf("reading %s: %w", path, err)
		case meta.Kind == "PriorityLevelConfiguration" && len(schemas) == 0:
			var pl flowcontrolv1.PriorityLevelConfiguration
			err = json.Unmarshal(raw, &pl)
			levels = append(levels, pl)
		case meta.Kind == "FlowSchema":
			var fs flowcontrolv1.FlowSchema
			err = json.Unmarshal(raw, &fs)
			schemas = append(schemas, fs)
		default:
			return nil, nil, fmt.Errorf("%s: a %s where levels then schemas are expected", path, meta.Kind)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("reading a %s of %s: %w", meta.Kind, path, err)
		}
	}
	if len(levels) == 0 || len(schemas) == 0 {
		return nil, nil, fmt.Errorf("%s has %d levels and %d schemas, want some of each", path, len(levels), len(schemas))
	}
	api := c.FlowcontrolV1()
	gotPL := map[string]*flowcontrolv1.PriorityLevelConfiguration{}
	for i := range levels {
		pl, err := api.PriorityLevelConfigurations().Create(ctx, &levels[i], metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			pl, err = api.PriorityLevelConfigurations().Get(ctx, levels[i].Name, metav1.GetOptions{})
		}
		if err != nil {
			return nil, nil, fmt.Errorf("creating PriorityLevelConfiguration %s: %w", levels[i].Name, err)
		}
		gotPL[pl.Name] = pl
	}
	var got []*flowcontrolv1.FlowSchema
	for i := range schemas {
		fs, err := api.FlowSchemas().Create(ctx, &schemas[i], metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			fs, err = api.FlowSchemas().Get(ctx, schemas[i].Name, metav1.GetOptions{})
		}
		if err != nil {
			return nil, nil, fmt.Errorf("creating FlowSchema %s: %w", schemas[i].Name, err)
		}
		got = append(got, fs)
	}
	return got, gotPL, nil
}

// FlowCounts reads the API server's count of requests API Priority and
// Fairness dispatched and rejected, by flow schema.
func FlowCounts(ctx context.Context, c kubernetes.Interface) (dispatched, rejected map[string]int, err error) {
	m, err := ScrapeMetrics(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	d, err := m.Sum("apiserver_flowcontrol_dispatched_requests_total", "flow_schema")
	if err != nil {
		return nil, nil, err
	}
	r, err := m.Sum("apiserver_flowcontrol_rejected_requests_total", "flow_schema")
	return counts(d), counts(r), err
}

// Rejections reads APF's rejections by flow schema and reason
// ("drainpipe/queue-full"), so a run says whose requests were refused and why.
func Rejections(ctx context.Context, c kubernetes.Interface) (map[string]int, error) {
	m, err := ScrapeMetrics(ctx, c)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	err = m.each("apiserver_flowcontrol_rejected_requests_total", func(line string, v float64) {
		out[label(line, "flow_schema")+"/"+label(line, "reason")] += int(v)
	})
	if err != nil {
		return nil, err
	}
	// And which requests: the API server's 429s by verb and resource.
	err = m.each("apiserver_request_total", func(line string, v float64) {
		if label(line, "code") == "429" {
			out["429 "+label(line, "verb")+" "+label(line, "resource")+"/"+label(line, "subresource")] += int(v)
		}
	})
	return out, err
}

func counts(sums map[string]float64) map[string]int {
	out := make(map[string]int, len(sums))
	for k, v := range sums {
		out[k] = int(v)
	}
	return out
}
