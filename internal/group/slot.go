package group

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Marks on the slot Leases.
const (
	// HashLabel carries Group.Hash, so one LIST reads a group's slots.
	HashLabel = "drainpipe.dev/group"
	// NameAnnotation carries the group's name, for people.
	NameAnnotation = "drainpipe.dev/group-name"
)

// Slot is a drain slot held by a node. Keep renews it while the drain
// runs; Release frees it when the drain ends. A slot not released expires
// LeaseDuration after its last renewal.
type Slot struct {
	l      *Limiter
	client kubernetes.Interface
	group  Group

	mu    sync.Mutex
	lease *coordinationv1.Lease
}

// Name is the slot Lease's namespace/name.
func (s *Slot) Name() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lease.Namespace + "/" + s.lease.Name
}

// Group is the group the slot belongs to.
func (s *Slot) Group() Group { return s.group }

// try looks at the group's slots once (one LIST) and takes one for node:
// its own, renewed (a redelivery of its drain), else a free or expired one
// (one write, at the resourceVersion read). Neither: Busy says who holds
// them all.
func (l *Limiter) try(ctx context.Context, client kubernetes.Interface, g Group, slots int, node string) (*Slot, Busy, error) {
	busy := Busy{Group: g, Slots: slots}
	leases := client.CoordinationV1().Leases(l.cfg.Namespace)
	list, err := leases.List(ctx, metav1.ListOptions{LabelSelector: HashLabel + "=" + g.Hash()})
	if err != nil {
		return nil, busy, fmt.Errorf("listing the drain slots of group %s in namespace %s: %w", g.Name, l.cfg.Namespace, err)
	}
	byIndex := map[int]*coordinationv1.Lease{}
	for i := range list.Items {
		le := &list.Items[i]
		if idx, ok := slotIndex(g, le.Name); ok && idx < slots {
			byIndex[idx] = le
		}
	}
	now := l.now()
	for i := range slots {
		if le := byIndex[i]; le != nil && holder(le) == node {
			s := &Slot{l: l, client: client, group: g, lease: le}
			if err := s.renew(ctx); err == nil {
				return s, busy, nil
			} else if !errors.Is(err, errLost) {
				return nil, busy, err
			}
		}
	}
	start := offset(node, slots)
	for k := range slots {
		i := (start + k) % slots
		le := byIndex[i]
		if le != nil && holder(le) != "" && !l.expired(le, now) {
			continue
		}
		got, err := l.take(ctx, client, g, i, le, node)
		if errors.Is(err, errLost) {
			continue
		}
		if err != nil {
			return nil, busy, err
		}
		return &Slot{l: l, client: client, group: g, lease: got}, busy, nil
	}
	for _, le := range byIndex {
		if h := holder(le); h != "" && !l.expired(le, now) {
			busy.Holders = append(busy.Holders, h)
		}
	}
	sort.Strings(busy.Holders)
	return nil, busy, nil
}

// take creates slot i (old nil) or takes it over at the resourceVersion
// read; errLost when another taker won.
func (l *Limiter) take(ctx context.Context, client kubernetes.Interface, g Group, i int, old *coordinationv1.Lease, node string) (*coordinationv1.Lease, error) {
	leases := client.CoordinationV1().Leases(l.cfg.Namespace)
	now := metav1.NewMicroTime(l.now())
	secs := int32(l.cfg.LeaseDuration / time.Second)
	spec := coordinationv1.LeaseSpec{HolderIdentity: &node, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now}
	var got *coordinationv1.Lease
	var err error
	if old == nil {
		got, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: g.SlotName(i), Namespace: l.cfg.Namespace,
				Labels:      map[string]string{HashLabel: g.Hash(), "app.kubernetes.io/managed-by": "drainpipe"},
				Annotations: map[string]string{NameAnnotation: g.Name}},
			Spec: spec,
		}, metav1.CreateOptions{})
	} else {
		le := old.DeepCopy()
		transitions := int32(0)
		if le.Spec.LeaseTransitions != nil {
			transitions = *le.Spec.LeaseTransitions
		}
		if holder(le) != "" {
			l.log.Warn("taking over an expired drain slot (its holder's invocation ended without releasing it)",
				"lease", le.Name, "group", g.Name, "expired_holder", holder(le), "node", node)
			transitions++
		}
		spec.LeaseTransitions = &transitions
		le.Spec = spec
		got, err = leases.Update(ctx, le, metav1.UpdateOptions{})
	}
	// A create answered NotFound lost no race: the namespace is missing,
	// and no slot can ever be taken there.
	if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) || (apierrors.IsNotFound(err) && old != nil) {
		return nil, errLost
	}
	if err != nil {
		return nil, fmt.Errorf("taking drain slot %s/%s of group %s: %w", l.cfg.Namespace, g.SlotName(i), g.Name, err)
	}
	l.log.Debug("took a drain slot", "lease", got.Name, "group", g.Name, "node", node)
	return got, nil
}

// renew moves the slot's renew time to now; errLost when it is no longer
// the node's (expired and taken over).
func (s *Slot) renew(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	le := s.lease.DeepCopy()
	now := metav1.NewMicroTime(s.l.now())
	secs := int32(s.l.cfg.LeaseDuration / time.Second)
	le.Spec.RenewTime, le.Spec.LeaseDurationSeconds = &now, &secs
	got, err := s.client.CoordinationV1().Leases(le.Namespace).Update(ctx, le, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return errLost
	}
	if err != nil {
		return fmt.Errorf("renewing drain slot %s/%s: %w", le.Namespace, le.Name, err)
	}
	s.lease = got
	return nil
}

// Keep renews the slot every third of the lease duration until ctx ends
// or stop is called; stop returns once renewing has stopped. A slot lost
// meanwhile (this invocation stalled past its duration) is logged: the
// drain goes on, past the limit, rather than leave the node half drained.
func (s *Slot) Keep(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(s.l.cfg.LeaseDuration / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := s.renew(ctx); err != nil && ctx.Err() == nil {
				s.l.log.Warn("renewing drain slot", "lease", s.Name(), "group", s.group.Name, "error", err)
				if errors.Is(err, errLost) {
					return
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// Release frees the slot when the drain ends: the Lease is deleted if it
// is still the one this Slot holds (preconditions on its UID and
// resourceVersion). A slot already lost or gone is not an error.
func (s *Slot) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	le := s.lease
	err := s.client.CoordinationV1().Leases(le.Namespace).Delete(ctx, le.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &le.UID, ResourceVersion: &le.ResourceVersion},
	})
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		s.l.log.Debug("released drain slot", "lease", le.Name, "group", s.group.Name, "result", errString(err))
		return nil
	}
	return fmt.Errorf("releasing drain slot %s/%s: %w", le.Namespace, le.Name, err)
}

func errString(err error) string {
	if err == nil {
		return "deleted"
	}
	return err.Error()
}

// expired reports whether the Lease's holder let it lapse: its renew (or
// acquire) time plus its duration is past.
func (l *Limiter) expired(le *coordinationv1.Lease, now time.Time) bool {
	at := le.Spec.RenewTime
	if at == nil {
		at = le.Spec.AcquireTime
	}
	if at == nil {
		return true
	}
	d := l.cfg.LeaseDuration
	if le.Spec.LeaseDurationSeconds != nil {
		d = time.Duration(*le.Spec.LeaseDurationSeconds) * time.Second
	}
	return !now.Before(at.Add(d))
}

func holder(le *coordinationv1.Lease) string {
	if le.Spec.HolderIdentity == nil {
		return ""
	}
	return *le.Spec.HolderIdentity
}

// slotIndex reads i from a slot Lease's name <hash>-<i>.
func slotIndex(g Group, name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, g.Hash()+"-")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	return i, err == nil && i >= 0
}
