package sandbox

import (
	"os"
	"strings"
	"testing"
)

// The version the demo and README name is the one the webhook module builds.
func TestAuthenticatorVersionMatchesModule(t *testing.T) {
	data, err := os.ReadFile("authwebhook/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if want := "sigs.k8s.io/aws-iam-authenticator " + AuthenticatorVersion + "\n"; !strings.Contains(string(data), want) {
		t.Errorf("authwebhook/go.mod does not require %q", strings.TrimSpace(want))
	}
}
