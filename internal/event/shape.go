package event

import (
	"fmt"
	"slices"
	"strings"
)

// Shape is the form a message arrived in on the queue, named as in
// DRAINPIPE_ACCEPT.
type Shape string

// The shapes Parse reads.
const (
	ShapeEventBridge Shape = "eventbridge" // an EventBridge rule's target
	ShapeASGDirect   Shape = "asg-direct"  // a lifecycle hook notifying SQS itself
	ShapeSNS         Shape = "sns"         // either of them through an SNS topic
)

// AllShapes lists every shape, in a stable order.
func AllShapes() []Shape { return []Shape{ShapeEventBridge, ShapeASGDirect, ShapeSNS} }

// Shapes is a set of accepted shapes. The zero value accepts every shape,
// so local runs and `drainpipe explain` read anything.
type Shapes []Shape

// Has reports whether s is accepted.
func (ss Shapes) Has(s Shape) bool { return len(ss) == 0 || slices.Contains(ss, s) }

// String is the set as DRAINPIPE_ACCEPT spells it.
func (ss Shapes) String() string {
	if len(ss) == 0 {
		ss = AllShapes()
	}
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = string(s)
	}
	return strings.Join(parts, ",")
}

// ParseShapes reads a comma-separated list of shapes.
func ParseShapes(v string) (Shapes, error) {
	var out Shapes
	for _, part := range strings.Split(v, ",") {
		s := Shape(strings.TrimSpace(part))
		if s == "" {
			continue
		}
		if !slices.Contains(AllShapes(), s) {
			return nil, fmt.Errorf("unknown message shape %q (want %s)", s, Shapes(nil))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no message shape in %q", v)
	}
	return out, nil
}

// CheckShape rejects a message whose shape the deployment does not accept.
func CheckShape(s Shape, accept Shapes) error {
	if s == "" || accept.Has(s) {
		return nil
	}
	return rejectf("message shape %s is not accepted (DRAINPIPE_ACCEPT=%s)", s, accept)
}
