package handler

import "fmt"

// String names the status for logs.
func (s Status) String() string {
	switch s {
	case StatusDone:
		return "done"
	case StatusIgnored:
		return "ignored"
	case StatusRetry:
		return "retry"
	default:
		return fmt.Sprintf("status(%d)", int(s))
	}
}
