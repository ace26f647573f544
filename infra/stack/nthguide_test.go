package stack

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// NTH's own docs set up queue mode with this group and terminate hook.
const (
	nthGroup = "my-k8s-asg"
	nthHook  = "my-k8s-term-hook"
)

// guideDeployContext returns the -c context of the first `npx cdk deploy`
// in docs/migrating-from-nth.md's shell blocks, as the CDK CLI hands it to
// the app: every value a string.
func guideDeployContext(t *testing.T) map[string]any {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "migrating-from-nth.md"))
	if err != nil {
		t.Fatal(err)
	}
	var in bool
	var cmd strings.Builder
	for _, line := range strings.Split(string(doc), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			in = trimmed == "```sh"
			continue
		}
		if !in || (cmd.Len() == 0 && !strings.HasPrefix(trimmed, "npx cdk deploy ")) {
			continue
		}
		if more, ok := strings.CutSuffix(trimmed, `\`); ok {
			cmd.WriteString(more + " ")
			continue
		}
		cmd.WriteString(trimmed)
		break
	}
	words, err := shellWords(cmd.String())
	if err != nil || len(words) == 0 {
		t.Fatalf("docs/migrating-from-nth.md: no `npx cdk deploy` in a sh block (%v)", err)
	}
	ctx := map[string]any{}
	for i := 0; i < len(words); i++ {
		if words[i] != "-c" && words[i] != "--context" {
			continue
		}
		if i+1 == len(words) {
			t.Fatalf("%q ends with -c", cmd.String())
		}
		k, v, ok := strings.Cut(words[i+1], "=")
		if !ok {
			t.Fatalf("-c %s: want key=value", words[i+1])
		}
		ctx[k] = v
		i++
	}
	return ctx
}

// shellWords splits a command line as sh would: blanks separate words,
// single and double quotes group (no expansion is needed here).
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c in %q", quote, s)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// patternMatches says whether an EventBridge match array (exact strings
// and {"prefix": …}) matches v.
func patternMatches(match any, v string) bool {
	for _, m := range asList(match) {
		switch m := m.(type) {
		case string:
			if m == v {
				return true
			}
		case map[string]any:
			if p, ok := m["prefix"].(string); ok && strings.HasPrefix(v, p) {
				return true
			}
		}
	}
	return false
}

// TestNTHGuideServesNTHHooks walks the migration guide's deploy command:
// with exactly the context it gives, the stack must have a terminate
// lifecycle rule that matches NTH's group and hook, the function must own
// that hook, and its role must be allowed to heartbeat and complete the
// group's actions. The guide once deployed without asgNames and
// lifecycleHookNames: no lifecycle rule, no Auto Scaling permission, and
// every scale-in waited out the hook and terminated its node undrained.
func TestNTHGuideServesNTHHooks(t *testing.T) {
	ctx := guideDeployContext(t)
	p, err := FromContext(func(k string) any { return ctx[k] })
	if err != nil {
		t.Fatalf("the guide's context %v: %v", ctx, err)
	}
	p.AssetDir = fakeAsset(t)
	tpl := synth(t, p)

	var served []string
	for _, r := range tpl.ofType("AWS::Events::Rule") {
		pat, _ := r.Properties["EventPattern"].(map[string]any)
		detail, _ := pat["detail"].(map[string]any)
		for _, dt := range strs(pat["detail-type"]) {
			if dt != "EC2 Instance-terminate Lifecycle Action" && dt != "EC2 Instance-launch Lifecycle Action" {
				continue
			}
			_, named := detail["LifecycleHookName"]
			if patternMatches(detail["AutoScalingGroupName"], nthGroup) && (!named || patternMatches(detail["LifecycleHookName"], nthHook)) {
				served = append(served, dt)
			}
		}
	}
	if !slices.Contains(served, "EC2 Instance-terminate Lifecycle Action") {
		t.Errorf("no lifecycle rule matches group %s, hook %s with the guide's context %v (matched: %v)", nthGroup, nthHook, ctx, served)
	}

	vars, _ := tpl.byAlias(t, "Function").Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
	if names := fmt.Sprint(vars["DRAINPIPE_LIFECYCLE_HOOK_NAMES"]); !slices.Contains(strings.Split(names, ","), nthHook) {
		t.Errorf("DRAINPIPE_LIFECYCLE_HOOK_NAMES = %q: the function would leave %s to its owner", names, nthHook)
	}

	groupARN := fmt.Sprintf("arn:aws:autoscaling:%s:%s:autoScalingGroup:0f2c7d3e-1111-2222-3333-444455556666:autoScalingGroupName/%s",
		simRegion, simAccount, nthGroup)
	for _, action := range []string{"autoscaling:CompleteLifecycleAction", "autoscaling:RecordLifecycleActionHeartbeat"} {
		allowed := false
		for _, r := range tpl.ofType("AWS::IAM::Policy") {
			doc, _ := tpl.concrete(r.Properties["PolicyDocument"]).(map[string]any)
			for _, st := range asList(doc["Statement"]) {
				m, _ := st.(map[string]any)
				if m["Effect"] != "Allow" || !slices.Contains(strs(m["Action"]), action) {
					continue
				}
				for _, res := range strs(m["Resource"]) {
					if ok, _ := path.Match(res, groupARN); ok {
						allowed = true
					}
				}
			}
		}
		if !allowed {
			t.Errorf("the function's role may not %s on %s", action, groupARN)
		}
	}
}
