package awsfake

import (
	"net/http"
	"net/url"
	"strings"
)

// Services besides the first four, for `drainpipe check`'s reads: SNS
// and CloudFormation (query/XML), Lambda (REST/JSON); EKS access entries
// and Auto Scaling groups join their services.
const (
	ServiceSNS            = "sns"
	ServiceCloudFormation = "cloudformation"
	ServiceLambda         = "lambda"
)

// moreState is the part of the Server those reads use.
type moreState struct {
	groups  []AutoScalingGroup
	entries []AccessEntry
	subs    map[string][]Subscription // by topic ARN; a key means the topic exists
	stacks  []Stack
	funcs   map[string]map[string]string // function name → environment
}

// lambdaPrefix is the REST path of Lambda's function resources.
const lambdaPrefix = "/2015-03-31/functions/"

// routeMore names the service and action of a request for those reads;
// service is "" for any other request.
func routeMore(r *http.Request, form url.Values) (service, action string) {
	switch {
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, lambdaPrefix) && strings.HasSuffix(r.URL.Path, "/configuration"):
		return ServiceLambda, "GetFunctionConfiguration"
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/clusters/") && strings.Contains(r.URL.Path, "/access-entries/"):
		return ServiceEKS, "DescribeAccessEntry"
	}
	switch action = form.Get("Action"); action {
	case "DescribeAutoScalingGroups", "DescribeLifecycleHooks":
		return ServiceAutoScaling, action
	case "ListSubscriptionsByTopic":
		return ServiceSNS, action
	case "DescribeStacks":
		return ServiceCloudFormation, action
	}
	return "", ""
}

// serveMore answers the requests routeMore knows, and reports whether it
// did.
func (s *Server) serveMore(w http.ResponseWriter, r *http.Request, body []byte) bool {
	var form url.Values
	if r.Method == http.MethodPost {
		form, _ = url.ParseQuery(string(body))
	}
	service, action := routeMore(r, form)
	if service == "" || action == "DescribeLifecycleHooks" {
		return false
	}
	params := form
	if r.Method == http.MethodGet {
		params = url.Values{"path": {r.URL.EscapedPath()}}
	}
	fault := s.record(Call{Service: service, Action: action, Params: params, Signed: true, UserAgent: r.UserAgent()})
	switch action {
	case "GetFunctionConfiguration":
		s.getFunctionConfiguration(w, r, fault)
	case "DescribeAccessEntry":
		s.describeAccessEntry(w, r, fault)
	case "DescribeAutoScalingGroups":
		s.describeAutoScalingGroups(w, form, fault)
	case "ListSubscriptionsByTopic":
		s.listSubscriptionsByTopic(w, form, fault)
	case "DescribeStacks":
		s.describeStacks(w, form, fault)
	}
	return true
}

// queryFault answers an injected fault of SNS or CloudFormation in their
// query protocol's words.
func queryFault(w http.ResponseWriter, service, action string, fault Fault) {
	switch fault {
	case Throttle:
		writeQueryError(w, http.StatusBadRequest, "Throttling", "Rate exceeded")
	case AccessDenied:
		code := "AccessDenied"
		if service == ServiceSNS {
			code = "AuthorizationError"
		}
		writeQueryError(w, http.StatusForbidden, code, "User: arn:aws:sts::111122223333:assumed-role/operator/me is not authorized to perform: "+
			service+":"+action)
	default:
		writeQueryError(w, http.StatusInternalServerError, "InternalFailure", "An internal error has occurred")
	}
}

// restFault answers an injected fault of Lambda or EKS in their REST
// protocol's words; NotFound is left to the caller.
func restFault(w http.ResponseWriter, service, action string, fault Fault) {
	switch fault {
	case Throttle:
		writeJSONError(w, http.StatusTooManyRequests, "TooManyRequestsException", "Rate exceeded")
	case AccessDenied:
		writeJSONError(w, http.StatusForbidden, "AccessDeniedException",
			"User: arn:aws:sts::111122223333:assumed-role/operator/me is not authorized to perform: "+service+":"+action)
	default:
		writeJSONError(w, http.StatusInternalServerError, "ServiceException", "An internal error has occurred")
	}
}
