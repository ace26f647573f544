package drain

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// DefaultReportTime bounds the report's write when the Request gives no
// ReportBy (a command run by hand, with no invocation to fit in).
const DefaultReportTime = 4 * time.Second

// writeSummary writes the Run's summary on the node, unless a Run that
// found nothing to do would only repeat it. The write has until
// req.ReportBy, whatever Run's context says (its end is often why the Run
// stopped): the first attempt half the time left, a second one the rest,
// so one slow answer from a loaded API server does not lose the report.
func (d *Drainer) writeSummary(ctx context.Context, req Request, rep Report, prev Summary, acted bool) (Summary, error) {
	s := Summarize(prev, req, rep, d.now())
	if !acted && prev.State == s.State && prev.EventID == s.EventID && prev.Kind == s.Kind {
		return prev, nil
	}
	return s, d.writeReport(context.WithoutCancel(ctx), req, s)
}

// writeReport writes s as the node's drain report, trying twice by
// req.ReportBy (DefaultReportTime from now when zero) or until ctx ends.
func (d *Drainer) writeReport(ctx context.Context, req Request, s Summary) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encoding drain report: %w", err)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{AnnotationReport: string(b)}}})
	if err != nil {
		return fmt.Errorf("encoding node patch: %w", err)
	}
	by := req.ReportBy
	if by.IsZero() {
		by = time.Now().Add(DefaultReportTime)
	}
	for attempt := 1; ; attempt++ {
		left := time.Until(by)
		if left <= 0 {
			return fmt.Errorf("writing drain report on %s: no time left (attempt %d): %w", req.Node, attempt, context.DeadlineExceeded)
		}
		at := by
		if attempt == 1 {
			at = time.Now().Add(left / 2)
		}
		err = d.patchReport(ctx, req.Node, patch, at)
		if err == nil || attempt == 2 {
			break
		}
		d.log.Warn("drain report write failed; trying once more", "node", req.Node, "error", err.Error())
	}
	if err != nil {
		return fmt.Errorf("writing drain report on %s (twice): %w", req.Node, err)
	}
	return nil
}

func (d *Drainer) patchReport(ctx context.Context, node string, patch []byte, by time.Time) error {
	ctx, cancel := context.WithDeadline(ctx, by)
	defer cancel()
	_, err := d.client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}
