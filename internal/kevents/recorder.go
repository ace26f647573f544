package kevents

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
)

// Options tune a Recorder; zero fields take the defaults.
type Options struct {
	Component    string        // the events' source component
	Timeout      time.Duration // per write
	Flush        time.Duration // how long Run waits for writes after the drain
	Workers      int           // writes in flight per run
	MaxPodEvents int           // pod events per run; more are dropped
	// Pace, when set, holds one of the instance's event seats for each
	// write (drain.Pace.Seat): at a wave's width, the reports of every
	// drain at once must not fill the API server's queues. The wait
	// counts in Timeout.
	Pace *drain.Pace
	// Crowded reports whether the drains run alongside others, the
	// instance's own or other instances' (see fold.go); Pace.Crowded by
	// default.
	Crowded func() bool
	// OnError observes every failed write (metrics); it must be quick.
	OnError func(error)
	Log     *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Component == "" {
		o.Component = DefaultComponent
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Flush <= 0 {
		o.Flush = DefaultFlush
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.MaxPodEvents <= 0 {
		o.MaxPodEvents = DefaultMaxPodEvents
	}
	if o.OnError == nil {
		o.OnError = func(error) {}
	}
	if o.Crowded == nil {
		o.Crowded = o.Pace.Crowded
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o
}

// Drainer runs drains; *drain.Drainer satisfies it.
type Drainer interface {
	Run(ctx context.Context, req drain.Request) (drain.Report, error)
}

// Recorder writes the events of one cluster's drains. It is safe for
// concurrent use.
type Recorder struct {
	client kubernetes.Interface
	opts   Options
	now    func() time.Time

	mu   sync.Mutex
	runs map[string]*session // by node
}

// New returns a Recorder writing through client.
func New(client kubernetes.Interface, o Options) *Recorder {
	return &Recorder{client: client, opts: o.withDefaults(), now: time.Now, runs: map[string]*session{}}
}

// Wrap returns a Drainer that runs d and records its events. Give the same
// Recorder's Observe to d as drain.Config.OnEvent for the pod events.
func (r *Recorder) Wrap(d Drainer) Drainer { return wrapped{r: r, d: d} }

type wrapped struct {
	r *Recorder
	d Drainer
}

// Run runs the drain, writes the node's start event once the node is
// cordoned, then its outcome event, and waits (at most Options.Flush) for
// the writes to finish.
//
// The start event follows the cordon and the request's own AfterCordon
// (the batch's gate): written first, a wave's start events were on their
// way to the API server with its last cordons. A cordon alone passes no
// AfterCordon, so the gate is passed here once it returns: in a wave of
// cordons only (rebalance recommendations), each node's event went out
// beside the other environments' cordons.
func (w wrapped) Run(ctx context.Context, req drain.Request) (drain.Report, error) {
	s := w.r.begin(ctx, req)
	defer w.r.end(s)
	gate := req.AfterCordon
	var passed bool
	req.AfterCordon = func(ctx context.Context) error {
		passed = true
		if gate != nil {
			if err := gate(ctx); err != nil {
				return err // no drain starts
			}
		}
		s.start()
		return nil
	}
	rep, err := w.d.Run(ctx, req)
	if err == nil {
		if !passed && gate != nil {
			if gerr := gate(ctx); gerr != nil {
				return rep, nil // the cordon is given back: no event for it
			}
		}
		s.start()
		if typ, reason, msg, ok := outcome(req, rep); ok {
			s.node(typ, reason, msg+s.foldedNote(rep))
		}
	}
	return rep, err
}

// Observe records pod events of a wrapped run; it fits drain.Config.OnEvent.
// It only starts a background write, never blocking the drain.
func (r *Recorder) Observe(e drain.Event) {
	r.mu.Lock()
	s := r.runs[e.Node]
	r.mu.Unlock()
	if s == nil || e.Pod == "" {
		return
	}
	ns, name, _ := strings.Cut(e.Pod, "/")
	ref := corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: name, UID: types.UID(e.PodUID)}
	switch e.Type {
	case drain.EventEvicted:
		if s.fold() {
			return
		}
		s.pod(ref, corev1.EventTypeNormal, Reason(s.req.Kind), evictedMessage(s.req, e))
	case drain.EventBlocked:
		s.pod(ref, corev1.EventTypeWarning, ReasonDrainBlocked,
			fmt.Sprintf("Eviction from node %s refused by a PodDisruptionBudget; Drainpipe keeps retrying%s: %s",
				e.Node, until(s.req.Deadline), e.Detail))
	case drain.EventDeleted:
		s.pod(ref, corev1.EventTypeWarning, ReasonDeletedAtDeadline,
			fmt.Sprintf("Deleted from node %s with %d s grace: a PodDisruptionBudget still blocked its eviction and the instance "+
				"goes%s", e.Node, e.GraceSeconds, until(s.req.Deadline)))
	case drain.EventFailed:
		s.pod(ref, corev1.EventTypeWarning, ReasonEvictionRefused,
			fmt.Sprintf("Eviction from node %s refused: %s", e.Node, e.Detail))
	}
}

// session is one wrapped run's pending writes.
type session struct {
	r      *Recorder
	req    drain.Request
	ctx    context.Context // detached from the drain's cancellation; ends at end()
	cancel context.CancelFunc
	sem    chan struct{}
	wg     sync.WaitGroup

	started <-chan struct{} // closed when the node's start event is written (or abandoned)

	mu      sync.Mutex
	pods    int
	dropped int
	folded  int // Evicted pod events left out (fold)
}

// session returns the run on node, nil when none.
func (r *Recorder) session(node string) *session {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs[node]
}

// start begins writing the node's start event, once.
func (s *session) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started == nil {
		s.started = s.node(corev1.EventTypeNormal, Reason(s.req.Kind), startMessage(s.req))
	}
}

// startedChan returns the channel closed once the node's start event is
// written, nil before the write begins.
func (s *session) startedChan() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

func (r *Recorder) begin(ctx context.Context, req drain.Request) *session {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &session{r: r, req: req, ctx: sctx, cancel: cancel, sem: make(chan struct{}, r.opts.Workers)}
	r.mu.Lock()
	r.runs[req.Node] = s
	r.mu.Unlock()
	return s
}

// end waits for the session's writes, at most Options.Flush, then
// abandons the rest.
func (r *Recorder) end(s *session) {
	r.mu.Lock()
	if r.runs[s.req.Node] == s {
		delete(r.runs, s.req.Node)
	}
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	t := time.NewTimer(r.opts.Flush)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		r.opts.Log.Warn("kubernetes events still being written after the drain; abandoning them", "node", s.req.Node)
	}
	s.cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dropped > 0 {
		r.opts.Log.Info("kubernetes pod events dropped", "node", s.req.Node, "dropped", s.dropped)
	}
}

func (s *session) node(typ, reason, msg string) <-chan struct{} {
	return s.write(nodeEventNamespace, nodeRef(s.req.Node), typ, reason, msg)
}

func nodeRef(node string) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: node, UID: types.UID(node)}
}

func (s *session) pod(ref corev1.ObjectReference, typ, reason, msg string) {
	if s.count() {
		s.write(ref.Namespace, ref, typ, reason, msg)
	}
}

// count counts a pod event and reports whether it is within
// Options.MaxPodEvents.
func (s *session) count() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pods++
	if s.pods > s.r.opts.MaxPodEvents {
		s.dropped++
		return false
	}
	return true
}

// write starts writing one event in the background; the channel closes
// when it is written or abandoned.
func (s *session) write(ns string, ref corev1.ObjectReference, typ, reason, msg string) <-chan struct{} {
	done := make(chan struct{})
	s.wg.Go(func() {
		defer close(done)
		select {
		case s.sem <- struct{}{}:
		case <-s.ctx.Done():
			return
		}
		defer func() { <-s.sem }()
		ctx, cancel := context.WithTimeout(s.ctx, s.r.opts.Timeout)
		defer cancel()
		seat, err := s.r.opts.Pace.Seat(ctx)
		if err == nil {
			err = s.r.put(ctx, ns, ref, typ, reason, s.req.EventID, msg)
			seat()
		}
		if err != nil {
			s.r.opts.Log.Warn("writing kubernetes event", "object", ref.Kind+"/"+ref.Name, "reason", reason, "error", err.Error())
			s.r.opts.OnError(err)
		}
	})
	return done
}

// put creates the event or, when a delivery of the same interruption made
// it already, refreshes its time and message.
func (r *Recorder) put(ctx context.Context, ns string, ref corev1.ObjectReference, typ, reason, eventID, msg string) error {
	now := metav1.NewTime(r.now())
	msg = truncate(msg, maxMessage)
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: eventName(ref, reason, eventID), Namespace: ns},
		InvolvedObject: ref,
		Reason:         reason,
		Message:        msg,
		Type:           typ,
		Source:         corev1.EventSource{Component: r.opts.Component},
		FirstTimestamp: now,
		LastTimestamp:  now,
		Count:          1,
	}
	events := r.client.CoreV1().Events(ns)
	_, err := events.Create(ctx, ev, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("creating event %s/%s: %w", ns, ev.Name, err)
		}
		return nil
	}
	patch, err := json.Marshal(map[string]any{"lastTimestamp": now, "message": msg})
	if err != nil {
		return fmt.Errorf("encoding event patch: %w", err)
	}
	if _, err := events.Patch(ctx, ev.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("refreshing event %s/%s: %w", ns, ev.Name, err)
	}
	return nil
}

// eventName is stable for one object, reason and interruption, and a valid
// object name whatever the object's name length.
func eventName(ref corev1.ObjectReference, reason, eventID string) string {
	h := fnv.New64a()
	for _, s := range []string{ref.Kind, ref.Namespace, ref.Name, string(ref.UID), reason, eventID} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%s.drainpipe.%016x", truncate(ref.Name, 200), h.Sum64())
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
