package awsfake

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"slices"
)

// LifecycleAction is a pending Auto Scaling lifecycle action: one hook
// holding one instance until it is completed.
type LifecycleAction struct {
	ASG        string
	Hook       string
	Token      string
	InstanceID string
}

// Completion is a lifecycle action completed through the fake.
type Completion struct {
	LifecycleAction
	Result string // CONTINUE or ABANDON
	// Expired is true when no call completed the action: its heartbeat
	// or global timeout passed and Result is its hook's DefaultResult.
	Expired bool
}

// AddLifecycleAction makes an action pending. CompleteLifecycleAction and
// RecordLifecycleActionHeartbeat succeed only for pending actions, found by
// token or, without one, by instance ID; otherwise they answer the
// ValidationError Auto Scaling gives for actions that are no longer active.
func (s *Server) AddLifecycleAction(a LifecycleAction) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.actions = append(s.actions, a)
	s.beginLocked(a)
}

// Pending returns the lifecycle actions not yet completed.
func (s *Server) Pending() []LifecycleAction {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	return slices.Clone(s.actions)
}

// Completed returns the lifecycle actions completed so far, in order.
func (s *Server) Completed() []Completion {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	return slices.Clone(s.completed)
}

func (s *Server) lifecycleAction(w http.ResponseWriter, action string, form url.Values, fault Fault) {
	if fault != 0 {
		s.lifecycleFault(w, action, form, fault)
		return
	}
	asg, hook := form.Get("AutoScalingGroupName"), form.Get("LifecycleHookName")
	token, id := form.Get("LifecycleActionToken"), form.Get("InstanceId")
	if asg == "" || hook == "" || (token == "" && id == "") {
		writeQueryError(w, http.StatusBadRequest, "ValidationError", "AutoScalingGroupName, LifecycleHookName and LifecycleActionToken or InstanceId are required")
		return
	}
	result := form.Get("LifecycleActionResult")
	if action == "CompleteLifecycleAction" && result != "CONTINUE" && result != "ABANDON" {
		writeQueryError(w, http.StatusBadRequest, "ValidationError", "LifecycleActionResult must be CONTINUE or ABANDON")
		return
	}

	s.mu.Lock()
	s.expireLocked()
	i := slices.IndexFunc(s.actions, func(a LifecycleAction) bool {
		if a.ASG != asg || a.Hook != hook {
			return false
		}
		if token != "" {
			return a.Token == token && (id == "" || a.InstanceID == id)
		}
		return a.InstanceID == id
	})
	if i >= 0 {
		s.touchLocked(s.actions[i], action, result)
	}
	var done *Completion
	if i >= 0 && action == "CompleteLifecycleAction" {
		done = &Completion{LifecycleAction: s.actions[i], Result: result}
		s.completed = append(s.completed, *done)
		s.actions = slices.Delete(s.actions, i, i+1)
	}
	onComplete := s.hk.onComplete
	s.mu.Unlock()
	if done != nil && onComplete != nil {
		onComplete(*done)
	}
	if i < 0 {
		writeQueryError(w, http.StatusBadRequest, "ValidationError", noActiveMessage(form))
		return
	}
	writeXML(w, http.StatusOK, queryResponse{
		XMLName:   xml.Name{Space: autoScalingNS, Local: action + "Response"},
		Result:    struct{ XMLName xml.Name }{xml.Name{Local: action + "Result"}},
		RequestID: requestID,
	})
}

// lifecycleFault answers an injected fault in Auto Scaling's words.
func (s *Server) lifecycleFault(w http.ResponseWriter, action string, form url.Values, fault Fault) {
	switch fault {
	case Throttle:
		writeQueryError(w, http.StatusBadRequest, "Throttling", "Rate exceeded")
	case AccessDenied:
		writeQueryError(w, http.StatusForbidden, "AccessDenied",
			"User: arn:aws:sts::111122223333:assumed-role/drainpipe/fn is not authorized to perform: autoscaling:"+action)
	case NoActiveLifecycleAction:
		writeQueryError(w, http.StatusBadRequest, "ValidationError", noActiveMessage(form))
	default:
		writeQueryError(w, http.StatusInternalServerError, "InternalFailure", "An internal error has occurred")
	}
}

// noActiveMessage is Auto Scaling's wording for an action that is gone.
func noActiveMessage(form url.Values) string {
	if t := form.Get("LifecycleActionToken"); t != "" {
		return "No active Lifecycle Action found with token " + t
	}
	return "No active Lifecycle Action found with instance ID " + form.Get("InstanceId")
}

const autoScalingNS = "http://autoscaling.amazonaws.com/doc/2011-01-01/"

type queryResponse struct {
	XMLName   xml.Name
	Result    struct{ XMLName xml.Name }
	RequestID string `xml:"ResponseMetadata>RequestId"`
}

type queryErrorResponse struct {
	XMLName xml.Name `xml:"ErrorResponse"`
	Error   struct {
		Type    string `xml:"Type"`
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	} `xml:"Error"`
	RequestID string `xml:"RequestId"`
}

func writeQueryError(w http.ResponseWriter, status int, code, msg string) {
	var resp queryErrorResponse
	resp.XMLName = xml.Name{Space: autoScalingNS, Local: "ErrorResponse"}
	resp.Error.Type = "Sender"
	if status >= 500 {
		resp.Error.Type = "Receiver"
	}
	resp.Error.Code, resp.Error.Message, resp.RequestID = code, msg, requestID
	writeXML(w, status, resp)
}
