package drain_test

// A pod watch the API server answers with 410 Gone / Expired, produced for
// real: the shared sandbox's watch cache serves old resourceVersions, so
// this test runs its own control plane without one, whose etcd is
// compacted every few seconds.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// expiryTimeout bounds waiting for etcd to compact past a resourceVersion.
const expiryTimeout = 2 * time.Minute

func TestWatchExpiryRelists(t *testing.T) {
	sb := sandbox.StartForTest(t, sandbox.Options{APIServerFlags: []string{"--watch-cache=false", "--etcd-compaction-interval=5s"}})
	t.Parallel()
	env := fixture.New(t, sb.RESTConfig())
	ctx, cancel := context.WithTimeout(context.Background(), expiryTimeout+runTimeout)
	defer cancel()
	n := env.Node(ctx, fixture.NodeOptions{})
	env.Deployment(ctx, "web", 2, fixture.PinnedTo(n.Name))
	pods := env.WaitPodsReady(ctx, "app=web", 2)
	list, err := env.Client.CoreV1().Pods(env.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	rv0 := list.ResourceVersion
	waitExpired(t, ctx, env, rv0)

	rec := &podRequests{rv0: rv0}
	rc := sb.RESTConfig()
	drain.TuneRESTConfig(rc, 0, 0)
	rc.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) { return rec.roundTrip(r, rt) })
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatalf("creating client: %v", err)
	}
	rep, err := drain.New(client, drain.DefaultConfig(), nil).Run(ctx, drain.Request{Node: n.Name, Kind: "asg-lifecycle", Evict: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var keys []string
	for _, p := range pods {
		keys = append(keys, env.Namespace+"/"+p.Name)
	}
	slices.Sort(keys)
	want := drain.Report{Node: n.Name, Evicted: keys, Done: true}
	if diff := cmp.Diff(want, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !rec.expired() {
		t.Fatalf("the watch from resourceVersion %s was not answered 410 Expired (status %d, body %q)", rv0, rec.status, rec.first.String())
	}
	t.Logf("pod requests %q; watch from %s answered %d, %d bytes", rec.seq, rv0, rec.status, rec.first.Len())
	// The engine's pod requests: the Run's list, the rewritten watch, then
	// a fresh list whose resourceVersion the next watch starts from: a 410
	// says the history since the watch's resourceVersion is gone.
	if len(rec.seq) < 2 || rec.seq[0] != "list" || rec.seq[1] != "watch "+rv0 {
		t.Fatalf("pod requests %q, want list, watch %s, ...", rec.seq, rv0)
	}
	relisted := map[string]bool{}
	for i, req := range rec.seq[2:] {
		if req == "list" {
			relisted["watch "+listRV(t, rec.lists[i+2])] = true
			continue
		}
		if !relisted[req] {
			t.Errorf("after the expiry, %s does not resume from a list made after it (pod requests %q)", req, rec.seq)
		}
		break
	}
	if len(relisted) == 0 {
		t.Errorf("no pod list between the expiry and the next watch (pod requests %q)", rec.seq)
	}
}

// listRV is the resourceVersion of a pod list, as JSON or protobuf.
func listRV(t *testing.T, body *bytes.Buffer) string {
	t.Helper()
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body.Bytes(), nil, nil)
	if err != nil {
		t.Fatalf("decoding a pod list: %v", err)
	}
	l, ok := obj.(*corev1.PodList)
	if !ok {
		t.Fatalf("decoding a pod list: got %T", obj)
	}
	return l.ResourceVersion
}

// waitExpired writes until a pod watch from rv answers 410 Expired, which
// happens once the API server has had etcd compact past rv.
func waitExpired(t *testing.T, ctx context.Context, env *fixture.Env, rv string) {
	t.Helper()
	cms := env.Client.CoreV1().ConfigMaps(env.Namespace)
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tick"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating configmap: %v", err)
	}
	pctx, cancel := context.WithTimeout(ctx, expiryTimeout)
	defer cancel()
	tick := 0
	err = wait.PollUntilContextCancel(pctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		tick++
		cm.Data = map[string]string{"tick": fmt.Sprint(tick)}
		if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			return false, fmt.Errorf("updating configmap: %w", err)
		}
		timeout := int64(1)
		w, err := env.Client.CoreV1().Pods(env.Namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, TimeoutSeconds: &timeout})
		if err != nil {
			return apierrors.IsResourceExpired(err) || apierrors.IsGone(err), nil
		}
		defer w.Stop()
		for ev := range w.ResultChan() {
			if ev.Type != watch.Error {
				return false, nil // replayed: rv is not compacted yet
			}
			st := apierrors.FromObject(ev.Object)
			return apierrors.IsResourceExpired(st) || apierrors.IsGone(st), nil
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("waiting for a pod watch from resourceVersion %s to expire: %v", rv, err)
	}
}

// podRequests rewrites the first pod watch to start at rv0 and records the
// pod requests, and what the server answered that watch.
type podRequests struct {
	rv0    string
	mu     sync.Mutex
	seq    []string              // "list" or "watch <resourceVersion>"
	lists  map[int]*bytes.Buffer // the bodies of the lists, by index in seq
	status int                   // of the rewritten watch
	first  bytes.Buffer          // its body
}

func (p *podRequests) roundTrip(r *http.Request, rt http.RoundTripper) (*http.Response, error) {
	if r.Method != http.MethodGet || r.URL.Path != "/api/v1/pods" {
		return rt.RoundTrip(r)
	}
	p.mu.Lock()
	var into *bytes.Buffer
	first := false
	if isWatch(r) {
		first = !containsWatch(p.seq)
		if first {
			r = r.Clone(r.Context())
			q := r.URL.Query()
			q.Set("resourceVersion", p.rv0)
			r.URL.RawQuery = q.Encode()
		}
		p.seq = append(p.seq, "watch "+r.URL.Query().Get("resourceVersion"))
		if first {
			into = &p.first
		}
	} else {
		if p.lists == nil {
			p.lists = map[int]*bytes.Buffer{}
		}
		into = &bytes.Buffer{}
		p.lists[len(p.seq)] = into
		p.seq = append(p.seq, "list")
	}
	p.mu.Unlock()
	resp, err := rt.RoundTrip(r)
	if into != nil && err == nil {
		if first {
			p.mu.Lock()
			p.status = resp.StatusCode
			p.mu.Unlock()
		}
		resp.Body = &teeBody{ReadCloser: resp.Body, p: p, into: into}
	}
	return resp, err
}

func containsWatch(seq []string) bool {
	for _, s := range seq {
		if strings.HasPrefix(s, "watch ") {
			return true
		}
	}
	return false
}

// expired tells whether the rewritten watch was answered 410, either as
// the HTTP status or as an ERROR event carrying a Status of reason
// Expired (JSON or protobuf: the reason is a plain string in both).
// p.mu must be held.
func (p *podRequests) expired() bool {
	return p.status == http.StatusGone || bytes.Contains(p.first.Bytes(), []byte(metav1.StatusReasonExpired))
}

// teeBody copies what the engine reads of a response into into.
type teeBody struct {
	io.ReadCloser
	p    *podRequests // its mu guards into
	into *bytes.Buffer
}

func (b *teeBody) Read(buf []byte) (int, error) {
	n, err := b.ReadCloser.Read(buf)
	b.p.mu.Lock()
	b.into.Write(buf[:n])
	b.p.mu.Unlock()
	return n, err
}
