package sweep

import (
	"fmt"
	"strings"
	"time"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/hold"
	"github.com/drainpipe/drainpipe/internal/instance"
)

// verdict is what to do with one held node: what is empty to leave it
// (why says why), else a Repair kind; match is the hold to give back.
type verdict struct {
	what  string
	why   string
	match drain.Match
}

func leave(format string, args ...any) verdict { return verdict{why: fmt.Sprintf(format, args...)} }

// judge decides what a held node needs, from its marks, its instance as
// EC2 describes it now and the instance's scheduled events. It gives back
// only a hold whose threat is over, past the margin; it never touches a
// node Karpenter is disrupting or one being deleted.
func (s *Sweeper) judge(h held, inst instance.Instance, found bool, events []instance.ScheduledEvent) verdict {
	m := drain.ReadMarks(h.node)
	now := s.d.Now()
	if h.node.DeletionTimestamp != nil {
		return leave("node is being deleted")
	}
	if m.Karpenter {
		return leave("Karpenter is disrupting the node (%s): it is Karpenter's", drain.KarpenterDisruptedTaint)
	}
	if !m.Held() {
		return leave("node carries the held label but no Drainpipe hold")
	}
	if h.instance == "" {
		return leave("node's providerID %q names no EC2 instance", h.node.Spec.ProviderID)
	}
	if !found {
		return leave("EC2 does not know instance %s: the node controller removes a node whose instance is gone", h.instance)
	}
	if inst.Cluster != h.cluster {
		return leave("instance %s is not routed to cluster %s (EC2 tags say %q)", h.instance, h.cluster, inst.Cluster)
	}
	if inst.State == "stopped" || inst.State == "terminated" {
		if !s.cfg.OutOfService || m.OutOfSvc || hasOutOfService(h.node) {
			return leave("instance is %s; node already out of service or DRAINPIPE_OUT_OF_SERVICE is off", inst.State)
		}
		return verdict{what: RepairOutOfService, why: fmt.Sprintf("instance is %s but its node was never tainted out of "+
			"service: the state-change notice was lost", inst.State)}
	}
	if inst.State != "running" {
		return leave("instance is %s: the notice for it may still come", inst.State)
	}
	if len(m.Holds) == 0 {
		since, err := time.Parse(time.RFC3339, m.Since)
		if err == nil && now.Sub(since) < s.cfg.Margin {
			return leave("held since %s, less than the %s margin: its own notice may still come", m.Since, s.cfg.Margin)
		}
		back := verdict{what: RepairGivenBack, match: drain.Match{Running: true},
			why: "instance runs but its node holds no threat: the notice that ended it was lost"}
		if m.OutOfSvc {
			back.why = "instance runs but its node is tainted out of service: the running notice was lost"
		}
		return back
	}
	var over []hold.Key
	var whys, left []string
	for _, hd := range m.Holds {
		ended, why := s.judgeHold(hd, h.life, events, now)
		if ended {
			over = append(over, hd.Key())
			whys = append(whys, hd.Key().String()+": "+why)
		} else {
			left = append(left, hd.Key().String()+": "+why)
		}
	}
	if len(over) == 0 {
		return leave("%s", strings.Join(left, "; "))
	}
	return verdict{what: RepairGivenBack, why: strings.Join(whys, "; "),
		match: drain.Match{Holds: over, Running: true}}
}

// judgeHold says whether one hold's threat is over, past the margin, on a
// running instance, and why (or why not).
func (s *Sweeper) judgeHold(hd hold.Hold, l life, events []instance.ScheduledEvent, now time.Time) (bool, string) {
	since, err := time.Parse(time.RFC3339, hd.Since)
	if err != nil || now.Sub(since) < s.cfg.Margin {
		return false, fmt.Sprintf("held since %s, less than the %s margin: its own notice may still come", hd.Since, s.cfg.Margin)
	}
	deadline, _ := time.Parse(time.RFC3339, hd.Deadline)
	switch event.Kind(hd.Kind) {
	case event.KindStateChange:
		return true, "instance runs again after its stop: the running notice was lost"
	case event.KindSpotInterruption, event.KindCapacityReservationInterruption:
		if deadline.IsZero() {
			// Held by a release that kept no deadline: the warning came at
			// most its notice before it, so the cordon bounds it.
			deadline = since.Add(spotNotice)
		}
		if now.Before(deadline.Add(s.cfg.Margin)) {
			return false, fmt.Sprintf("deadline %s not passed by the %s margin: the drain may be in progress",
				deadline.UTC().Format(time.RFC3339), s.cfg.Margin)
		}
		return true, fmt.Sprintf("instance still runs %s after its %s deadline: EC2 did not take it",
			now.Sub(deadline).Round(time.Second), hd.Kind)
	case event.KindCapacityBlockExpiry:
		end := blockEnd(hd, deadline, since)
		if now.Before(end.Add(s.cfg.Margin)) {
			return false, fmt.Sprintf("capacity block ends %s: not passed by the %s margin, EC2 may still terminate the instance",
				end.UTC().Format(time.RFC3339), s.cfg.Margin)
		}
		return true, fmt.Sprintf("instance still runs %s after its capacity block ended: EC2 did not take it",
			now.Sub(end).Round(time.Second))
	case event.KindScheduledChange:
		for _, e := range events {
			// EC2 and Health name one event by its start: another event
			// listed keeps its own hold, not this one (either start
			// unknown, it keeps it).
			if !deadline.IsZero() && !e.NotBefore.IsZero() && !drain.SameStart(e.NotBefore, deadline) {
				continue
			}
			return false, fmt.Sprintf("scheduled event %s (%s, from %s) still listed for the instance", e.ID, e.Code,
				e.NotBefore.Format(time.RFC3339))
		}
		if end, err := time.Parse(time.RFC3339, hd.End); err == nil && end.After(deadline) {
			deadline = end // the notice's window: the change may come until it closes
		}
		if !deadline.IsZero() && now.Before(deadline.Add(s.cfg.Margin)) {
			return false, fmt.Sprintf("scheduled change window open until %s: not passed by the %s margin",
				deadline.UTC().Format(time.RFC3339), s.cfg.Margin)
		}
		return true, "EC2 lists no scheduled event for the instance any more and its window is over: the notice closing it was lost"
	case event.KindRebalanceRecommendation:
		end := since.Add(s.cfg.RebalanceHold)
		if s.cfg.RebalanceHold == 0 {
			return false, "DRAINPIPE_REBALANCE_HOLD is 0: rebalance cordons are kept"
		}
		if now.Before(end.Add(s.cfg.Margin)) {
			return false, fmt.Sprintf("rebalance hold ends %s: not passed by the %s margin", end.UTC().Format(time.RFC3339), s.cfg.Margin)
		}
		return true, fmt.Sprintf("rebalance hold ended %s ago and no interruption followed: its redelivery was lost",
			now.Sub(end).Round(time.Second))
	case event.KindASGLifecycle:
		l = l.orMax()
		end := actionStart(hd, since).Add(l.d)
		if recorded, err := time.Parse(time.RFC3339, hd.End); err == nil && recorded.After(end) {
			// The life first read while the action was pending: a timeout
			// lowered since does not end it sooner.
			end, l.d, l.from = recorded, recorded.Sub(actionStart(hd, since)), "as read while the action was pending"
		}
		if now.Before(end.Add(s.cfg.Margin)) {
			return false, fmt.Sprintf("a terminate lifecycle action may still be pending until %s (%s, %s): the instance goes with it",
				end.UTC().Format(time.RFC3339), l.d, l.from)
		}
		return true, fmt.Sprintf("instance still runs %s after its terminate lifecycle action could last (%s, %s): "+
			"it was not terminated", now.Sub(end).Round(time.Second), l.d, l.from)
	}
	return false, fmt.Sprintf("held for %s, which the sweep does not judge", hd.Kind)
}
