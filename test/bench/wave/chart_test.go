package main

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// TestWriteChart draws two series and checks the SVG is well-formed XML
// with both curves of each and its legend.
func TestWriteChart(t *testing.T) {
	s := time.Second
	var b strings.Builder
	err := writeChart(&b, "wave <test>", []series{
		{name: "drainpipe", color: "#1f77b4", cordoned: []time.Duration{s, 2 * s}, drained: []time.Duration{5 * s, 0}, nodes: 2},
		{name: "floor", color: "#2ca02c", cordoned: []time.Duration{s / 2}, drained: []time.Duration{3 * s}, nodes: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(strings.NewReader(b.String()))
	polylines := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if el, ok := tok.(xml.StartElement); ok && el.Name.Local == "polyline" {
			polylines++
		}
	}
	if polylines != 4 {
		t.Errorf("%d polylines, want 4 (cordoned and drained of two series)", polylines)
	}
	for _, want := range []string{"drainpipe", "floor", "wave &lt;test&gt;"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("chart lacks %q", want)
		}
	}
}
