package stack

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

func unsubscribedWarnings(t *testing.T, p Props) int {
	t.Helper()
	found := assertions.Annotations_FromStack(newStack(t, p)).FindWarning(jsii.String("*"),
		assertions.Match_StringLikeRegexp(jsii.String(".*reach nobody.*")))
	return len(*found)
}

// TestSynthWarnsWhenAlarmsReachNobody: without alarmEmail or
// alarmTopicArn the stack's topic has no subscriber; synth says so.
func TestSynthWarnsWhenAlarmsReachNobody(t *testing.T) {
	p := testProps(t)
	if n := unsubscribedWarnings(t, p); n != 1 {
		t.Errorf("no alarmEmail, no alarmTopicArn: %d warnings, want 1", n)
	}
	p.AlarmEmail = "oncall@example.com"
	if n := unsubscribedWarnings(t, p); n != 0 {
		t.Errorf("alarmEmail set: %d warnings, want none", n)
	}
	p.AlarmEmail, p.AlarmTopicARN = "", "arn:aws:sns:eu-west-1:123456789012:oncall"
	if n := unsubscribedWarnings(t, p); n != 0 {
		t.Errorf("alarmTopicArn set: %d warnings, want none", n)
	}
}

// TestReadmeDeployAlarmsReachSomeone: the README's and deploy.md's deploy
// context subscribe someone to the alarms.
func TestReadmeDeployAlarmsReachSomeone(t *testing.T) {
	for _, doc := range []string{"README.md", filepath.Join("docs", "deploy.md")} {
		b, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		ctx := map[string]any{}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			line, _, _ := strings.Cut(sc.Text(), "#")
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "CTX="); ok {
				words, err := shellWords(v)
				if err != nil || len(words) != 1 {
					t.Fatalf("%s: CTX=%s: %v", doc, v, err)
				}
				for _, w := range strings.Fields(words[0]) {
					if k, v, ok := strings.Cut(w, "="); ok {
						ctx[k] = v
					}
				}
			}
		}
		p, err := FromContext(func(k string) any { return ctx[k] })
		if err != nil || len(ctx) == 0 {
			t.Fatalf("%s: CTX %v: %v", doc, ctx, err)
		}
		p.AssetDir = fakeAsset(t)
		if n := unsubscribedWarnings(t, p); n != 0 {
			t.Errorf("%s's deploy context %v: the alarms reach nobody", doc, ctx)
		}
	}
}
