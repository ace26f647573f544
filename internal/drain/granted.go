package drain

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// GrantFinishedReason is the Detail of the EventEvicted of a pod whose
// eviction a budget had granted before the deletion was cut short.
const GrantFinishedReason = "eviction granted by budget, deletion cut short: finished"

// grantMaxAge bounds the age of a budget's record of a granted eviction
// that a Run finishes. The Eviction API records the disruption in the
// budget's status, then deletes the pod; a cut between the two leaves the
// pod running but counted as disrupted until the disruption controller
// drops the record after its DeletionTimeout of 2 minutes, and then may
// grant another disruption. 90 s leaves 30 s for clock skew between the
// API server and us and for the delete itself.
const grantMaxAge = 90 * time.Second

// grantedTo reports whether a disruption recorded at at is a grant to the
// pod created at created that is still safe to finish at now. Budgets
// record pods by name: a later pod of the same name never inherits one.
func grantedTo(at, created, now time.Time) bool {
	return !at.IsZero() && !at.Before(created) && now.Sub(at) < grantMaxAge
}

// granted reports whether the budget selecting t records t's disruption as
// granted, recently enough to finish it (grantedTo). As in the Eviction
// API, exactly one budget must select the pod.
func (r *run) granted(ctx context.Context, t *target) (bool, error) {
	list, err := r.d.client.PolicyV1().PodDisruptionBudgets(t.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, fmt.Errorf("listing disruption budgets: %w", err)
	}
	var at time.Time
	var names []string
	for i := range list.Items {
		b := &list.Items[i]
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(t.labels)) {
			continue
		}
		names = append(names, b.Name)
		at = b.Status.DisruptedPods[t.name].Time
	}
	r.mu.Lock()
	t.budget = strings.Join(names, ",") // for the report
	r.mu.Unlock()
	return len(names) == 1 && grantedTo(at, t.created, r.d.now()), nil
}

// finishGranted follows a budget's refusal to evict t (err): when the
// budget had already granted t's eviction, it deletes t with grace, the
// grace the eviction carried. It returns the attempt's outcome and error.
func (r *run) finishGranted(ctx context.Context, t *target, grace *int64, err error) (outcome, error) {
	ok, gerr := r.granted(ctx, t)
	if gerr != nil {
		r.log.Warn("cannot tell whether a budget granted the eviction", slog.String("pod", t.key), slog.String("error", gerr.Error()))
	}
	if !ok {
		return outBlocked, err
	}
	if err := r.deletePod(ctx, t, grace); err != nil {
		err = fmt.Errorf("deleting pod to finish its granted eviction: %w", err)
		switch out := classify(err); out {
		case outGone, outConflict:
			return out, err
		}
		return outRetry, err
	}
	return outFinished, nil
}
