package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// series is one run's curves: when each interrupted node was cordoned and
// drained (zero: never), out of nodes.
type series struct {
	name, color       string
	cordoned, drained []time.Duration
	nodes             int
}

// Chart geometry: a log-scale time axis, since Drainpipe drains in seconds
// and the NTH-style peer in minutes.
const (
	chartW, chartH         = 820, 440
	padL, padR, padT, padB = 60, 20, 40, 50
	minT                   = 100 * time.Millisecond
)

// writeChart draws, for each series, the share of interrupted nodes
// cordoned (dashed) and drained (solid) against the time since the wave
// was enqueued, as an SVG.
func writeChart(w io.Writer, title string, all []series) error {
	maxT := 10 * time.Second
	for _, s := range all {
		for _, d := range slices.Concat(s.cordoned, s.drained) {
			maxT = max(maxT, d)
		}
	}
	decades := math.Ceil(math.Log10(float64(maxT) / float64(minT)))
	x := func(d time.Duration) float64 {
		f := math.Log10(float64(max(d, minT))/float64(minT)) / decades
		return padL + f*(chartW-padL-padR)
	}
	y := func(share float64) float64 { return chartH - padB - share*(chartH-padT-padB) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", chartW, chartH)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="24" font-size="15">%s</text>`+"\n", padL, escape(title))
	for i := 0; i <= 4; i++ {
		yy := y(float64(i) / 4)
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%d%%</text>`+"\n",
			padL, chartW-padR, yy, yy, padL-6, yy+4, i*25)
	}
	for i := 0; i <= int(decades); i++ {
		d := minT * time.Duration(math.Pow10(i))
		xx := x(d)
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#ddd"/><text x="%.1f" y="%d" text-anchor="middle">%gs</text>`+"\n",
			xx, xx, padT, chartH-padB, xx, chartH-padB+16, d.Seconds())
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">time since the wave was enqueued (log scale)</text>`+"\n", (chartW+padL)/2, chartH-12)
	for i, s := range all {
		for _, c := range []struct {
			times []time.Duration
			dash  string
		}{{s.drained, ""}, {s.cordoned, ` stroke-dasharray="5,4"`}} {
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n", s.color, c.dash, steps(c.times, s.nodes, x, y))
		}
		ly := padT + 14 + 18*i
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"/><text x="%d" y="%d">%s</text>`+"\n",
			padL+10, padL+34, ly, ly, s.color, padL+40, ly+4, escape(s.name))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#555">solid: drained · dashed: cordoned</text>`+"\n", padL+10, padT+14+18*len(all))
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// steps is the polyline of a cumulative share: flat, then up one node at
// each time (never-seen nodes leave the curve short of 100%).
func steps(times []time.Duration, nodes int, x func(time.Duration) float64, y func(float64) float64) string {
	var ts []time.Duration
	for _, t := range times {
		if t > 0 {
			ts = append(ts, t)
		}
	}
	slices.Sort(ts)
	pts := []string{fmt.Sprintf("%.1f,%.1f", x(minT), y(0))}
	for i, t := range ts {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(t), y(float64(i)/float64(max(1, nodes)))),
			fmt.Sprintf("%.1f,%.1f", x(t), y(float64(i+1)/float64(max(1, nodes)))))
	}
	return strings.Join(pts, " ")
}

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
