package fleet

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
)

// ApplyFlowControl applies deploy/flowcontrol.yaml: Drainpipe's
// PriorityLevelConfiguration, then its FlowSchemas, in the file's order.
func ApplyFlowControl(ctx context.Context, c kubernetes.Interface, path string) ([]*flowcontrolv1.FlowSchema, *flowcontrolv1.PriorityLevelConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var pl flowcontrolv1.PriorityLevelConfiguration
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	if err := dec.Decode(&pl); err != nil || pl.Kind != "PriorityLevelConfiguration" {
		return nil, nil, fmt.Errorf("reading the PriorityLevelConfiguration of %s (kind %q): %v", path, pl.Kind, err)
	}
	var schemas []flowcontrolv1.FlowSchema
	for {
		var fs flowcontrolv1.FlowSchema
		err := dec.Decode(&fs)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || fs.Kind != "FlowSchema" {
			return nil, nil, fmt.Errorf("reading a FlowSchema of %s (kind %q): %v", path, fs.Kind, err)
		}
		schemas = append(schemas, fs)
	}
	if len(schemas) == 0 {
		return nil, nil, fmt.Errorf("%s has no FlowSchema", path)
	}
	api := c.FlowcontrolV1()
	gotPL, err := api.PriorityLevelConfigurations().Create(ctx, &pl, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		gotPL, err = api.PriorityLevelConfigurations().Get(ctx, pl.Name, metav1.GetOptions{})
	}
	if err != nil {
		return nil, nil, fmt.Errorf("creating PriorityLevelConfiguration %s: %w", pl.Name, err)
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
	raw, err := c.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	dispatched, rejected = map[string]int{}, map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var into map[string]int
		switch {
		case strings.HasPrefix(line, "apiserver_flowcontrol_dispatched_requests_total{"):
			into = dispatched
		case strings.HasPrefix(line, "apiserver_flowcontrol_rejected_requests_total{"):
			into = rejected
		default:
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %q: %w", line, err)
		}
		into[label(line, "flow_schema")] += int(v)
	}
	return dispatched, rejected, sc.Err()
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
