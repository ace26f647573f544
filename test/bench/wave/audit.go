package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The cordon is timed where it takes effect: when the API server answered
// the first write that left the node unschedulable, from its audit log.
// The observer's watch sees a cordon later, and later still while the
// API server is busy: in Drainpipe's runs its own first evictions were
// under way (a cordon logged by the function at 0.42 s was seen at 0.54
// s), in the bound's none were (it drains once every node is cordoned).
// Timed at the API server, both runs are judged alike; the observer's
// figure is printed beside it.

// auditPolicy logs, with the node as written, every write to a node
// object (not its status: the kubelets' heartbeats), who deleted which
// pod of the fleet (a delete, not an eviction: past any budget), and
// nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
  - level: RequestResponse
    verbs: ["patch", "update"]
    resources:
      - group: ""
        resources: ["nodes"]
  - level: Metadata
    verbs: ["delete"]
    namespaces: ["fleet"]
    resources:
      - group: ""
        resources: ["pods"]
  - level: None
`

// auditFlags writes the policy into dir (with every request logged when
// all: requestsPolicy) and returns the API server's flags for it and the
// log's path.
func auditFlags(dir string, all bool) (flags []string, log string, err error) {
	policy, text := filepath.Join(dir, "audit-policy.yaml"), auditPolicy
	if all {
		text = requestsPolicy()
	}
	if err := os.WriteFile(policy, []byte(text), 0o600); err != nil {
		return nil, "", fmt.Errorf("writing the audit policy: %w", err)
	}
	log = filepath.Join(dir, "audit.log")
	return []string{
		"--audit-policy-file=" + policy, "--audit-log-path=" + log, "--audit-log-format=json",
		"--audit-log-mode=blocking", "--audit-log-maxbackup=1", "--audit-log-maxsize=1024",
	}, log, nil
}

// auditEvent is what cordonCommits reads of an audit event.
type auditEvent struct {
	Verb string `json:"verb"`
	User struct {
		Username string `json:"username"`
	} `json:"user"`
	ImpersonatedUser *struct {
		Username string `json:"username"`
	} `json:"impersonatedUser"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	ResponseObject struct {
		Spec struct {
			Unschedulable bool `json:"unschedulable"`
		} `json:"spec"`
	} `json:"responseObject"`
	StageTimestamp time.Time `json:"stageTimestamp"`
}

// cordonCommits reads, per target node, when the API server answered the
// first successful write after start that left it unschedulable.
func cordonCommits(path string, start time.Time, targets map[string]bool) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	err := readAudit(path, func(ev *auditEvent) {
		name := ev.ObjectRef.Name
		if ev.ObjectRef.Resource != "nodes" || ev.ObjectRef.Subresource != "" || !targets[name] ||
			!ev.ok() || !ev.ResponseObject.Spec.Unschedulable || ev.StageTimestamp.Before(start) {
			return
		}
		if d, seen := out[name]; !seen || ev.StageTimestamp.Sub(start) < d {
			out[name] = ev.StageTimestamp.Sub(start)
		}
	})
	return out, err
}

// deletedPastBudget counts, per target node, the pods the run's handler
// deleted after start: successful deletes of pods on (podNode) the target
// nodes by an impersonated user, the handlers' identities. An eviction is
// the pods/eviction subresource, a reclaim the admin's deletecollection,
// a kubelet's final delete its own user's: none of them counts.
func deletedPastBudget(path string, start time.Time, ns string, podNode map[string]string) (map[string]int, error) {
	out := map[string]int{}
	err := readAudit(path, func(ev *auditEvent) {
		node, ok := podNode[ev.ObjectRef.Name]
		if ev.Verb != "delete" || ev.ObjectRef.Resource != "pods" || ev.ObjectRef.Subresource != "" || ev.ObjectRef.Namespace != ns ||
			!ok || ev.ImpersonatedUser == nil || !ev.ok() || ev.StageTimestamp.Before(start) {
			return
		}
		out[node]++
	})
	return out, err
}

func (ev *auditEvent) ok() bool {
	return ev.ResponseStatus.Code >= 200 && ev.ResponseStatus.Code <= 299
}

// readAudit calls fn with each event of the audit log at path.
func readAudit(path string, fn func(*auditEvent)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading the audit log: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("reading the audit log: %w", err)
		}
		fn(&ev)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading the audit log: %w", err)
	}
	return nil
}
