package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// What a wave asks of the API server, by whom (-requests): the audit
// policy then also logs every other request at Metadata level, except the
// kubelets' heartbeats (leases, node and pod status), which no handler
// sets off, so a run shows how the API server's requests split between the
// handler and the control plane answering its evictions. Logging them
// slows the API server: the run's times are not comparable with a run
// without -requests.

// requestsPolicy is auditPolicy with that catch-all in place of its last
// rule (level None).
func requestsPolicy() string {
	return strings.TrimSuffix(auditPolicy, "  - level: None\n") + `  - level: None
    resources:
      - group: "coordination.k8s.io"
        resources: ["leases"]
      - group: ""
        resources: ["nodes/status", "pods/status"]
  - level: Metadata
`
}

// controlPlane are the identities of the sandbox's control plane: what
// each eviction sets off (the replacement created, scheduled and started,
// its Deployment's and ReplicaSet's status, the budget's, and the eviction
// handler's own reads of the namespace's budgets).
var controlPlane = []string{"system:kube-controller-manager", "system:kube-scheduler", "system:apiserver", "kwok"}

// requestCounts is the audit log's requests answered within a window.
type requestCounts struct {
	byIdentity map[string]int // the impersonated user, else the user
	byCall     map[string]int // the handler's: "verb resource[/subresource] code"
	cpCalls    map[string]int // the control plane's: "identity verb resource[/subresource]"
	granted    int            // evictions answered 2xx, anyone's
	evictions  int            // the handler's evictions, whatever the answer
}

// waveRequests counts the requests of the log at path answered from start
// to end; handler names the identity whose calls are itemised.
func waveRequests(path string, start, end time.Time, handler string) (requestCounts, error) {
	rc := requestCounts{byIdentity: map[string]int{}, byCall: map[string]int{}, cpCalls: map[string]int{}}
	err := readAudit(path, func(ev *auditEvent) {
		if ev.StageTimestamp.Before(start) || ev.StageTimestamp.After(end) {
			return
		}
		who := ev.User.Username
		if ev.ImpersonatedUser != nil {
			who = ev.ImpersonatedUser.Username
		}
		rc.byIdentity[who]++
		res := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			res += "/" + ev.ObjectRef.Subresource
		}
		eviction := res == "pods/eviction"
		if eviction && ev.ok() {
			rc.granted++
		}
		switch {
		case who == handler:
			if eviction {
				rc.evictions++
			}
			rc.byCall[fmt.Sprintf("%s %s %d", ev.Verb, res, ev.ResponseStatus.Code)]++
		case slices.Contains(controlPlane, who):
			rc.cpCalls[fmt.Sprintf("%s %s %s", strings.TrimPrefix(who, "system:"), ev.Verb, res)]++
		}
	})
	return rc, err
}

// String is the line's body: the handler's and the control plane's
// requests, each also per granted eviction, then every identity, the
// handler's calls and the control plane's eight most frequent, most first.
func (rc requestCounts) String() string {
	total, cp := 0, 0
	for who, n := range rc.byIdentity {
		total += n
		if slices.Contains(controlPlane, who) {
			cp += n
		}
	}
	handler := 0
	for _, n := range rc.byCall {
		handler += n
	}
	per := func(n int) string {
		if rc.granted == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", float64(n)/float64(rc.granted))
	}
	share := func(n int) string {
		if total == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(total))
	}
	return fmt.Sprintf("requests=%d granted_evictions=%d handler=%d (%s, %s a granted eviction; beyond its evictions %d, %s) control_plane=%d (%s, %s a granted eviction) by identity: %s; handler's calls: %s; control plane's: %s",
		total, rc.granted, handler, share(handler), per(handler), handler-rc.evictions, share(handler-rc.evictions),
		cp, share(cp), per(cp), mostFirst(rc.byIdentity, 0), mostFirst(rc.byCall, 0), mostFirst(rc.cpCalls, 8))
}

// mostFirst prints counts largest first, ties by name, the first limit
// of them (0: all).
func mostFirst(m map[string]int, limit int) string {
	keys := slices.Sorted(maps.Keys(m))
	slices.SortStableFunc(keys, func(a, b string) int { return m[b] - m[a] })
	if limit > 0 && len(keys) > limit {
		keys = keys[:limit]
	}
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
