package drain

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// outcome classifies an eviction request's result.
type outcome int

const (
	outEvicted  outcome = iota // accepted: the pod is terminating
	outGone                    // no such pod
	outConflict                // 409: the UID precondition failed, or the pod changed; a GET tells which
	outNSGoing                 // its namespace is being deleted, and the pod with it
	outBlocked                 // a disruption budget refuses for now: retry
	outRetry                   // a transient error: retry
	outFailed                  // retrying cannot help
	outDeleted                 // deleted past a budget at the deadline (never from classify)
	outFinished                // deleted to finish an eviction a budget had granted (never from classify)
)

// classify sorts an eviction's answer by status code, reason and causes,
// never by message text: messages carry pod names, which can contain any
// word.
func classify(err error) outcome {
	if err == nil {
		return outEvicted
	}
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		// Not from the API server: the connection failed or timed out.
		return outRetry
	}
	st := se.Status()
	switch {
	case apierrors.IsNotFound(err):
		return outGone
	case apierrors.IsConflict(err):
		return outConflict
	case apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return outNSGoing
	case apierrors.HasStatusCause(err, policyv1.DisruptionBudgetCause):
		// 429, with retryAfterSeconds 10 while the budget's status is behind.
		return outBlocked
	case apierrors.IsForbidden(err) && isBudgetDetails(st.Details):
		// 403 on the budget itself: its disruptions allowed went negative
		// or too many evictions await its controller. It catches up.
		return outBlocked
	case st.Code == 500 && st.Reason == metav1.StatusReasonUnknown:
		// The eviction handler's own answer when several budgets select
		// the pod: a Status with code 500 and no reason, which no retry
		// changes. Server faults carry reason InternalError.
		return outFailed
	case apierrors.IsTooManyRequests(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err),
		apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err), apierrors.IsUnexpectedServerError(err):
		return outRetry
	}
	return outFailed
}

func isBudgetDetails(d *metav1.StatusDetails) bool {
	return d != nil && d.Group == policyv1.GroupName && d.Kind == "poddisruptionbudget"
}
