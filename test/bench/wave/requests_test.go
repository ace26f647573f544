package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/test/fleet"
)

// TestWaveRequestsCountTheWindowByIdentity checks the counting: only the
// window's requests, each under the identity it acted as (the impersonated
// user first), the handler's itemised by call and answer, and the granted
// evictions anyone's.
func TestWaveRequestsCountTheWindowByIdentity(t *testing.T) {
	start := time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC)
	ev := func(s int, user, as, verb, res, sub string, code int) string {
		imp := ""
		if as != "" {
			imp = fmt.Sprintf(`"impersonatedUser":{"username":%q},`, as)
		}
		return fmt.Sprintf(`{"kind":"Event","verb":%q,"user":{"username":%q},%s"objectRef":{"resource":%q,"subresource":%q},"responseStatus":{"code":%d},"stageTimestamp":%q}`,
			verb, user, imp, res, sub, code, start.Add(time.Duration(s)*time.Second).Format(time.RFC3339Nano))
	}
	log := strings.Join([]string{
		ev(-1, "admin", "drainpipe", "create", "pods", "eviction", 201), // before the wave
		ev(1, "admin", "drainpipe", "create", "pods", "eviction", 201),
		ev(2, "admin", "drainpipe", "create", "pods", "eviction", 429),
		ev(2, "admin", "drainpipe", "patch", "nodes", "", 200),
		ev(3, "system:kube-controller-manager", "", "create", "pods", "", 201),
		ev(3, "kwok", "", "delete", "pods", "", 200),
		ev(3, "kwok", "", "delete", "pods", "", 200),
		ev(4, "admin", "neighbour", "get", "configmaps", "", 200),
		ev(5, "admin", "", "create", "pods", "eviction", 201),   // an admin's drain
		ev(11, "admin", "drainpipe", "patch", "nodes", "", 200), // after it
	}, "\n") + "\n"
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	rc, err := waveRequests(path, start, start.Add(10*time.Second), "drainpipe")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"drainpipe": 3, "system:kube-controller-manager": 1, "kwok": 2, "neighbour": 1, "admin": 1}
	if fmt.Sprint(rc.byIdentity) != fmt.Sprint(want) {
		t.Errorf("by identity = %v, want %v", rc.byIdentity, want)
	}
	calls := map[string]int{"create pods/eviction 201": 1, "create pods/eviction 429": 1, "patch nodes 200": 1}
	if fmt.Sprint(rc.byCall) != fmt.Sprint(calls) {
		t.Errorf("handler's calls = %v, want %v", rc.byCall, calls)
	}
	if rc.granted != 2 {
		t.Errorf("granted evictions = %d, want 2 (Drainpipe's and the admin's)", rc.granted)
	}
	line := rc.String()
	for _, part := range []string{"requests=8 ", "granted_evictions=2 ", "handler=3 (38%, 1.50 a granted eviction; beyond its evictions 1, 12%)",
		"control_plane=3 (38%, 1.50 a granted eviction)", "by identity: {drainpipe=3, kwok=2, admin=1, neighbour=1, system:kube-controller-manager=1}",
		"control plane's: {kwok delete pods=2, kube-controller-manager create pods=1}"} {
		if !strings.Contains(line, part) {
			t.Errorf("line lacks %q:\n%s", part, line)
		}
	}
}

// TestRequestsPolicyLogsTheWave runs the wide policy on a real API server:
// the handler's eviction is logged under its identity, a lease's write (a
// heartbeat) is not, and the narrow policy still logs no eviction.
func TestRequestsPolicyLogsTheWave(t *testing.T) {
	for _, all := range []bool{true, false} {
		t.Run(fmt.Sprint("all=", all), func(t *testing.T) {
			admin, dp, log := auditedFleet(t, all)
			ctx := t.Context()
			const ns = "fleet"
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "evicted"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}}}
			if _, err := admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "heartbeat"}}
			if _, err := admin.CoordinationV1().Leases(ns).Create(ctx, lease, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := dp.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "evicted", Namespace: ns}}); err != nil {
				t.Fatal(err)
			}
			rc, err := waveRequests(log, start, time.Now(), fleet.DrainpipeUser.User)
			if err != nil {
				t.Fatal(err)
			}
			evictions := rc.byCall["create pods/eviction 201"]
			switch {
			case !all && (evictions != 0 || rc.granted != 0):
				t.Errorf("the narrow policy logged evictions: %v", rc.byCall)
			case all && (evictions != 1 || rc.granted != 1):
				t.Errorf("handler's calls = %v (granted %d), want its one eviction", rc.byCall, rc.granted)
			}
			leases := 0
			if err := readAudit(log, func(ev *auditEvent) {
				if ev.ObjectRef.Resource == "leases" {
					leases++
				}
			}); err != nil {
				t.Fatal(err)
			}
			if leases != 0 {
				t.Errorf("%d lease writes logged, want none (heartbeats)", leases)
			}
		})
	}
}
