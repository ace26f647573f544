package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/drainpipe/drainpipe/internal/preflight"
)

// printReport writes the report as JSON, or as two tables: the hooks,
// then the other findings.
func printReport(w io.Writer, rep preflight.Report, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	s := rep.Stack
	fmt.Fprintf(w, "Stack (from %s): clusters %s; groups %s; hooks %s\n\n", rep.Source, strings.Join(s.Clusters, ","),
		orDash(groupsOf(s)), orDash(strings.Join(s.HookNames, ",")))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tCLUSTERS\tHOOK\tTRANSITION\tSTATUS\tVERDICT\tWHY")
	for _, h := range rep.Hooks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.Group, orDash(strings.Join(h.Clusters, ",")), orDash(h.Hook),
			orDash(strings.TrimPrefix(h.Transition, "autoscaling:EC2_INSTANCE_")), h.Status, h.Verdict, h.Reason)
	}
	if len(rep.Hooks) == 0 {
		fmt.Fprintln(tw, "-\t-\t-\t-\t-\t-\tno Auto Scaling group of these clusters in this region")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tCHECK\tSTATUS\tDETAIL")
	for _, c := range rep.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", orDash(c.Cluster), c.What, c.Status, c.Detail)
	}
	return tw.Flush()
}

func groupsOf(s preflight.Stack) string {
	parts := append([]string{}, s.ASGNames...)
	if s.ASGNamePrefix != "" {
		parts = append(parts, s.ASGNamePrefix+"*")
	}
	return strings.Join(parts, ",")
}
