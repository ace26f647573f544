package awsfake

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// LifecycleHook is an Auto Scaling lifecycle hook. Actions of a hook added
// with AddLifecycleHook expire as Auto Scaling's do: when HeartbeatTimeout
// passes without a heartbeat, or the global timeout (min(100 ×
// HeartbeatTimeout, 48 h)) passes since the action began, DefaultResult
// applies and later calls answer "No active Lifecycle Action". Actions of
// hooks never added do not expire.
type LifecycleHook struct {
	ASG              string
	Name             string
	Transition       string        // default autoscaling:EC2_INSTANCE_TERMINATING
	HeartbeatTimeout time.Duration // default 1 h, whole seconds
	DefaultResult    string        // default ABANDON
	// NotificationTargetARN and RoleARN are the hook's direct target, if
	// any (DescribeLifecycleHooks reports them).
	NotificationTargetARN, RoleARN string
}

// maxGlobalTimeout is Auto Scaling's cap on an action's life.
const maxGlobalTimeout = 48 * time.Hour

// globalTimeout is min(100 × HeartbeatTimeout, 48 h).
func (h LifecycleHook) globalTimeout() time.Duration {
	return min(100*h.HeartbeatTimeout, maxGlobalTimeout)
}

// HookCall is one heartbeat, completion or expiry of a lifecycle action,
// with when it happened on the fake's clock.
type HookCall struct {
	LifecycleAction
	Op     string // "heartbeat", "complete" or "expire"
	Result string // the result of a completion or expiry
	Time   time.Time
}

// Hook operations in HookCall.Op.
const (
	OpHeartbeat = "heartbeat"
	OpComplete  = "complete"
	OpExpire    = "expire"
)

// hookState is the part of the Server that times lifecycle actions.
type hookState struct {
	now   func() time.Time
	hooks []LifecycleHook
	begun map[LifecycleAction]time.Time // when each pending action began
	beat  map[LifecycleAction]time.Time // its last heartbeat (or beginning)
	log   []HookCall
	// onComplete sees each successful completion before it is answered.
	onComplete func(Completion)
}

// OnComplete has fn called with each successful CompleteLifecycleAction
// before the caller gets its answer: a fault test checks there whether
// the instance's node was really drained at that moment.
func (s *Server) OnComplete(fn func(Completion)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hk.onComplete = fn
}

// SetClock makes the fake read time from now (a test's fake clock) for
// lifecycle actions; the default is time.Now.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hk.now = now
}

func (s *Server) nowLocked() time.Time {
	if s.hk.now == nil {
		return time.Now()
	}
	return s.hk.now()
}

// AddLifecycleHook defines a hook; DescribeLifecycleHooks reports it.
func (s *Server) AddLifecycleHook(h LifecycleHook) {
	if h.Transition == "" {
		h.Transition = "autoscaling:EC2_INSTANCE_TERMINATING"
	}
	if h.HeartbeatTimeout == 0 {
		h.HeartbeatTimeout = time.Hour
	}
	if h.DefaultResult == "" {
		h.DefaultResult = "ABANDON"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hk.hooks = append(s.hk.hooks, h)
}

// HookCalls returns every successful heartbeat and completion, and every
// expiry, in order.
func (s *Server) HookCalls() []HookCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	return slices.Clone(s.hk.log)
}

// beginLocked starts timing a new action.
func (s *Server) beginLocked(a LifecycleAction) {
	if s.hk.begun == nil {
		s.hk.begun, s.hk.beat = map[LifecycleAction]time.Time{}, map[LifecycleAction]time.Time{}
	}
	now := s.nowLocked()
	s.hk.begun[a], s.hk.beat[a] = now, now
}

func (s *Server) hookOf(a LifecycleAction) (LifecycleHook, bool) {
	i := slices.IndexFunc(s.hk.hooks, func(h LifecycleHook) bool { return h.ASG == a.ASG && h.Name == a.Hook })
	if i < 0 {
		return LifecycleHook{}, false
	}
	return s.hk.hooks[i], true
}

// expireLocked ends the actions whose heartbeat or global timeout passed,
// applying their hook's default result.
func (s *Server) expireLocked() {
	now := s.nowLocked()
	s.actions = slices.DeleteFunc(s.actions, func(a LifecycleAction) bool {
		h, ok := s.hookOf(a)
		if !ok {
			return false
		}
		at := s.hk.beat[a].Add(h.HeartbeatTimeout)
		if g := s.hk.begun[a].Add(h.globalTimeout()); g.Before(at) {
			at = g
		}
		if now.Before(at) {
			return false
		}
		s.completed = append(s.completed, Completion{LifecycleAction: a, Result: h.DefaultResult, Expired: true})
		s.hk.log = append(s.hk.log, HookCall{LifecycleAction: a, Op: OpExpire, Result: h.DefaultResult, Time: at})
		return true
	})
}

// touchLocked records a served heartbeat or completion of a.
func (s *Server) touchLocked(a LifecycleAction, action, result string) {
	op := OpHeartbeat
	if action == "CompleteLifecycleAction" {
		op = OpComplete
	}
	now := s.nowLocked()
	s.hk.log = append(s.hk.log, HookCall{LifecycleAction: a, Op: op, Result: result, Time: now})
	if op == OpHeartbeat && s.hk.beat != nil {
		s.hk.beat[a] = now
	}
}

func (s *Server) describeLifecycleHooks(w http.ResponseWriter, form url.Values, fault Fault) {
	if fault != 0 {
		s.lifecycleFault(w, "DescribeLifecycleHooks", form, fault)
		return
	}
	asg := form.Get("AutoScalingGroupName")
	if asg == "" {
		writeQueryError(w, http.StatusBadRequest, "ValidationError", "AutoScalingGroupName is required")
		return
	}
	var names []string
	for i := 1; form.Has("LifecycleHookNames.member." + strconv.Itoa(i)); i++ {
		names = append(names, form.Get("LifecycleHookNames.member."+strconv.Itoa(i)))
	}
	type member struct {
		ASG              string `xml:"AutoScalingGroupName"`
		Name             string `xml:"LifecycleHookName"`
		Transition       string `xml:"LifecycleTransition"`
		HeartbeatTimeout int    `xml:"HeartbeatTimeout"`
		GlobalTimeout    int    `xml:"GlobalTimeout"`
		DefaultResult    string `xml:"DefaultResult"`
		Target           string `xml:"NotificationTargetARN,omitempty"`
		Role             string `xml:"RoleARN,omitempty"`
	}
	resp := struct {
		XMLName   xml.Name
		Hooks     []member `xml:"DescribeLifecycleHooksResult>LifecycleHooks>member"`
		RequestID string   `xml:"ResponseMetadata>RequestId"`
	}{XMLName: xml.Name{Space: autoScalingNS, Local: "DescribeLifecycleHooksResponse"}, RequestID: requestID}
	s.mu.Lock()
	for _, h := range s.hk.hooks {
		if h.ASG == asg && (len(names) == 0 || slices.Contains(names, h.Name)) {
			resp.Hooks = append(resp.Hooks, member{ASG: h.ASG, Name: h.Name, Transition: h.Transition,
				HeartbeatTimeout: int(h.HeartbeatTimeout / time.Second), GlobalTimeout: int(h.globalTimeout() / time.Second),
				DefaultResult: h.DefaultResult, Target: h.NotificationTargetARN, Role: h.RoleARN})
		}
	}
	s.mu.Unlock()
	writeXML(w, http.StatusOK, resp)
}
