package awserr

import (
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
)

func TestClassify(t *testing.T) {
	api := func(code string) error { return &smithy.GenericAPIError{Code: code, Message: "m"} }
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"nil", nil, nil},
		{"ec2 throttling", api("RequestLimitExceeded"), ErrThrottled},
		{"asg throttling after retries", &retry.MaxAttemptsError{Attempt: 3, Err: api("Throttling")}, ErrThrottled},
		{"eks access denied", fmt.Errorf("describing cluster: %w", api("AccessDeniedException")), ErrAccessDenied},
		{"ec2 unauthorized", api("UnauthorizedOperation"), ErrAccessDenied},
		{"eks not found", api("ResourceNotFoundException"), ErrNotFound},
		{"unknown code", api("InternalError"), nil},
		{"not an api error", errors.New("dial tcp: refused"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify(tt.err)
			if tt.err == nil {
				if got != nil {
					t.Fatalf("Classify(nil) = %v, want nil", got)
				}
				return
			}
			if class := Class(got); class != tt.want {
				t.Errorf("Class(Classify(err)) = %v, want %v", class, tt.want)
			}
			if got.Error() != tt.err.Error() {
				t.Errorf("message changed: got %q, want %q", got.Error(), tt.err.Error())
			}
			var a smithy.APIError
			if errors.As(tt.err, &a) && !errors.As(got, &a) {
				t.Error("classified error lost the smithy.APIError from its chain")
			}
		})
	}
}

func TestClassifyTwiceKeepsOneClass(t *testing.T) {
	err := Classify(Classify(&smithy.GenericAPIError{Code: "Throttling"}))
	var c *classified
	if !errors.As(err, &c) {
		t.Fatal("not classified")
	}
	if _, nested := c.err.(*classified); nested {
		t.Error("Classify wrapped an already classified error again")
	}
}
