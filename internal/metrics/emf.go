// Package metrics writes CloudWatch metrics in the Embedded Metric Format
// (EMF): one JSON document per line on stdout, which Lambda ships to
// CloudWatch Logs, where the metrics are extracted. No API call is made and
// nothing waits on the network.
//
// Metrics live in the namespace "Drainpipe" with few dimensions (kind,
// cluster, outcome; class for errors; and stack, naming the deployment,
// on every metric when set); each document also carries the
// node, instance and event ids as plain properties, so CloudWatch Logs
// Insights answers "what happened to node X" from the same lines.
package metrics

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"
)

// Namespace is the CloudWatch namespace of every metric.
const Namespace = "Drainpipe"

// Unit is a CloudWatch metric unit.
type Unit string

// The units Drainpipe uses.
const (
	Milliseconds Unit = "Milliseconds"
	Seconds      Unit = "Seconds"
	Count        Unit = "Count"
)

// Metric is one value of a document.
type Metric struct {
	Name  string
	Unit  Unit
	Value float64
}

// Doc is one EMF document: metrics, the dimension sets they are published
// under, and properties (dimension values and searchable context).
type Doc struct {
	Time time.Time
	// Dimensions lists dimension sets; every key must be in Props. An
	// empty set publishes the metrics without dimensions (the aggregate
	// that alarms and dashboards use).
	Dimensions [][]string
	Props      map[string]string
	Metrics    []Metric
}

// Encode returns d as one line of JSON, keys sorted (encoding/json sorts
// map keys) so the output is stable.
func Encode(d Doc) ([]byte, error) {
	defs := make([]map[string]string, len(d.Metrics))
	root := make(map[string]any, len(d.Props)+len(d.Metrics)+1)
	for k, v := range d.Props {
		root[k] = v
	}
	for i, m := range d.Metrics {
		if _, clash := root[m.Name]; clash || m.Name == "_aws" {
			return nil, fmt.Errorf("encoding metric %s: name used twice", m.Name)
		}
		defs[i] = map[string]string{"Name": m.Name, "Unit": string(m.Unit)}
		root[m.Name] = m.Value
	}
	dims := d.Dimensions
	if dims == nil {
		dims = [][]string{{}}
	}
	for _, set := range dims {
		for _, k := range set {
			if _, ok := d.Props[k]; !ok {
				return nil, fmt.Errorf("encoding dimension %s: no value", k)
			}
		}
	}
	root["_aws"] = map[string]any{
		"Timestamp": d.Time.UnixMilli(),
		"CloudWatchMetrics": []any{map[string]any{
			"Namespace":  Namespace,
			"Dimensions": dims,
			"Metrics":    defs,
		}},
	}
	b, err := json.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("encoding metrics: %w", err)
	}
	return append(b, '\n'), nil
}

// Emitter writes documents to a writer, one Write per line so lines from
// concurrent tasks (and the logger sharing stdout) never interleave. It is
// safe for concurrent use.
type Emitter struct {
	mu        sync.Mutex
	w         io.Writer
	now       func() time.Time
	requestID string
	stack     string              // value of DimStack on every document; "" adds none
	pending   map[string]drainRun // RecordDrain reports waiting for their RecordTask, by node
}

// New returns an Emitter writing to w (os.Stdout in Lambda; io.Discard
// turns metrics off).
func New(w io.Writer) *Emitter {
	return &Emitter{w: w, now: time.Now, pending: map[string]drainRun{}}
}

// WithStack adds dimension DimStack=name to every metric e emits (every
// dimension set, the aggregate included), so two deployments in one
// account and region (DRAINPIPE_METRICS_STACK) keep their metrics, alarms
// and dashboards apart. An empty name adds nothing. It returns e.
func (e *Emitter) WithStack(name string) *Emitter {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stack = name
	return e
}

// SetRequestID stamps the documents that follow with the invocation's
// request id. A Lambda process runs one invocation at a time, so the
// handler sets it when an invocation starts.
func (e *Emitter) SetRequestID(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.requestID = id
}

// Emit writes d, dated now when its Time is zero. A document that cannot
// be encoded or written is dropped: metrics never fail the work they
// measure.
func (e *Emitter) Emit(d Doc) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if d.Time.IsZero() {
		d.Time = e.now()
	}
	if e.requestID != "" || e.stack != "" {
		d.Props = maps.Clone(d.Props)
		if d.Props == nil {
			d.Props = map[string]string{}
		}
	}
	if e.requestID != "" {
		d.Props["request_id"] = e.requestID
	}
	if e.stack != "" {
		d.Props[DimStack] = e.stack
		d.Dimensions = withDimension(d.Dimensions, DimStack)
	}
	b, err := Encode(d)
	if err != nil {
		return
	}
	_, _ = e.w.Write(b)
}

// withDimension returns sets (nil meaning the one empty set) with key
// added to each.
func withDimension(sets [][]string, key string) [][]string {
	if sets == nil {
		sets = [][]string{{}}
	}
	out := make([][]string, len(sets))
	for i, set := range sets {
		out[i] = append(slices.Clone(set), key)
	}
	return out
}
