package notify

import (
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/handler"
)

// TestMessageEscapesSlackControls: &, < and > start Slack's control
// sequences (<!channel>, <https://link|text>, &lt;); text from errors or
// any field must not become a mention or a disguised link.
func TestMessageEscapesSlackControls(t *testing.T) {
	tk, _ := task()
	res := handler.Result{Status: handler.StatusRetry, Node: "node-a",
		Reason: `evicting: <!channel> see <https://evil.example|the runbook> & "retry"`}
	got := Message(tk, res, "prod", time.Second)
	for _, bad := range []string{"<!channel>", "<https://", "|the runbook>", `& "retry"`} {
		if strings.Contains(got, bad) {
			t.Errorf("message %q keeps %q unescaped", got, bad)
		}
	}
	want := `evicting: &lt;!channel&gt; see &lt;https://evil.example|the runbook&gt; &amp; "retry"`
	if !strings.Contains(got, want) {
		t.Errorf("message %q does not contain %q", got, want)
	}
}
