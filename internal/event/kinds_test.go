package event

import (
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestKindTable: each row is whole and no two rows claim a kind, a
// detail-type, a setting, a context key, a rule or a sample name.
func TestKindTable(t *testing.T) {
	setting := regexp.MustCompile(`^DRAINPIPE_ACTION_[A-Z_]+$`)
	contextKey := regexp.MustCompile(`^action[A-Z][A-Za-z]+$`)
	seen := map[string]Kind{}
	claim := func(what, v string, k Kind) {
		if v == "" {
			return
		}
		if other, dup := seen[what+" "+v]; dup {
			t.Errorf("%s %q is both %s's and %s's", what, v, other, k)
		}
		seen[what+" "+v] = k
	}
	for _, r := range Table() {
		claim("kind", string(r.Kind), r.Kind)
		claim("setting", r.Setting, r.Kind)
		claim("context key", r.ContextKey, r.Kind)
		claim("reason", r.Reason, r.Kind)
		if r.Source == "" || len(r.DetailTypes) == 0 || r.parse == nil {
			t.Errorf("%s: source %q, detail-types %q, parser set %v: want all three", r.Kind, r.Source, r.DetailTypes, r.parse != nil)
		}
		for _, d := range r.DetailTypes {
			claim("detail-type", d, r.Kind)
		}
		if r.Rule != nil {
			claim("rule", r.Rule.ID, r.Kind)
		}
		if r.Sample != nil {
			claim("sample", r.Sample.Name, r.Kind)
		}
		if r.Setting == "" {
			if r.ContextKey != "" || r.DefaultAction != "" || r.SettingDoc != "" {
				t.Errorf("%s has no setting but a context key, default action or setting doc", r.Kind)
			}
			continue
		}
		if !setting.MatchString(r.Setting) || !contextKey.MatchString(r.ContextKey) || r.SettingDoc == "" || r.Reason == "" {
			t.Errorf("%s: setting %q, context key %q, doc %q, reason %q", r.Kind, r.Setting, r.ContextKey, r.SettingDoc, r.Reason)
		}
		if !slices.Contains([]string{"none", actionCordon, actionCordonAndDrain}, r.DefaultAction) {
			t.Errorf("%s: default action %q is not none, cordon or cordon-and-drain", r.Kind, r.DefaultAction)
		}
	}
	states := slices.Sorted(slices.Values(StateChangeStates()))
	want := slices.Sorted(slices.Values(append(slices.Collect(maps.Keys(actedStates)), slices.Collect(maps.Keys(restoreStates))...)))
	if !slices.Equal(states, want) {
		t.Errorf("StateChangeStates %v, want the acted and restore states %v", states, want)
	}
}

// TestSamplesParse: every kind's sample event is read as that kind.
func TestSamplesParse(t *testing.T) {
	spec := SampleSpec{Instance: "i-0123456789abcdef0", Account: "123456789012", Region: "eu-west-1",
		Group: "workers", Hook: "drainpipe", State: "stopping", Reservation: "cr-0123456789abcdef0",
		Now: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC), NewID: func() string { return "6d1f2c3a-4b5e-4f60-8a7b-9c0d1e2f3a4b" }}
	for _, r := range Samples() {
		t.Run(r.Sample.Name, func(t *testing.T) {
			parsed := parseSample(t, r.Sample.Name, spec)
			if len(parsed.Interruptions) != 1 || parsed.Interruptions[0].Kind != r.Kind {
				t.Errorf("parsed %+v; want one %s", parsed, r.Kind)
			}
		})
	}
	if _, err := WriteSample("meteor", spec); err == nil || !strings.Contains(err.Error(), `unknown KIND "meteor"`) {
		t.Errorf("WriteSample(meteor): %v", err)
	}
}

// The Capacity Block sample's terminations begin --in after it is sent
// (its end date is that plus the termination lead); the Health sample's
// window opens --in after it is sent and lasts two hours; a Spot warning
// is sent its notice before the instance goes, so --in before that.
func TestSampleDeadlines(t *testing.T) {
	spec := SampleSpec{Instance: "i-0123456789abcdef0", Account: "123456789012", Region: "eu-west-1",
		Reservation: "cr-0123456789abcdef0", Now: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC),
		In: 15 * time.Minute, InSet: true, NewID: func() string { return "6d1f2c3a-4b5e-4f60-8a7b-9c0d1e2f3a4b" }}
	at := spec.Now.Add(spec.In)
	for name, end := range map[string]time.Time{"capacity-block": at.Add(BlockTerminationLead), "health": at.Add(2 * time.Hour)} {
		parsed := parseSample(t, name, spec)
		if len(parsed.Interruptions) != 1 || !parsed.Interruptions[0].Deadline.Equal(at) || !parsed.Interruptions[0].End.Equal(end) {
			t.Errorf("%s: parsed %+v; want one deadline %s, end %s", name, parsed.Interruptions, at, end)
		}
	}
	spec.In = 30 * time.Second
	if p := parseSample(t, "spot", spec); len(p.Interruptions) != 1 || !p.Interruptions[0].Deadline.Equal(spec.Now.Add(spec.In)) {
		t.Errorf("spot: parsed %+v; want one deadline %s", p.Interruptions, spec.Now.Add(spec.In))
	}
	first := Table()[0]
	if _, ok := Info(first.Kind); !ok {
		t.Errorf("Info(%s), the table's first kind: not found", first.Kind)
	}
}

// parseSample writes the sample named name in an EventBridge envelope and
// parses it.
func parseSample(t *testing.T, name string, spec SampleSpec) Parsed {
	t.Helper()
	e, err := WriteSample(name, spec)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(map[string]any{"version": "0", "id": spec.NewID(), "detail-type": e.DetailType,
		"source": e.Source, "account": spec.Account, "time": e.Time.Format(time.RFC3339), "region": spec.Region,
		"resources": e.Resources, "detail": e.Detail})
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := Parse(body)
	if err != nil {
		t.Fatalf("Parse(%s): %v", body, err)
	}
	return parsed
}

// TestNewKindIsOneRow adds a kind the way a new one is added (a parser,
// a row, no other change in this package) and sees it dispatched, listed
// among the policy's kinds and written as a sample.
func TestNewKindIsOneRow(t *testing.T) {
	const kind Kind = "test-kind"
	row := KindInfo{Kind: kind, Source: "aws.ec2", DetailTypes: []string{"EC2 Test Warning"},
		Setting: "DRAINPIPE_ACTION_TEST", ContextKey: "actionTest", DefaultAction: actionCordon,
		SettingDoc: "action on a test warning", Reason: "TestWarning",
		Rule:   &Rule{ID: "TestRule", Description: "test warnings"},
		Sample: &Sample{Name: "test", Usage: "EC2 Test Warning", build: sampleInstance},
		parse: func(h header, raw json.RawMessage) (Parsed, error) {
			var d ec2Detail
			if err := decodeDetail(raw, &d); err != nil {
				return Parsed{}, err
			}
			return act(h.interruption(kind, d.InstanceID))
		}}
	saved := kindTable
	kindTable = append(slices.Clone(kindTable), row)
	t.Cleanup(func() { kindTable = saved })

	if !slices.Contains(Kinds(), kind) {
		t.Errorf("Kinds() %v lacks %s", Kinds(), kind)
	}
	if got, ok := Info(kind); !ok || got.Setting != row.Setting {
		t.Errorf("Info(%s) = %+v, %v", kind, got, ok)
	}
	parsed := parseSample(t, "test", SampleSpec{Instance: "i-0123456789abcdef0", Account: "123456789012",
		Region: "eu-west-1", Now: time.Now().UTC(), NewID: func() string { return "6d1f2c3a-4b5e-4f60-8a7b-9c0d1e2f3a4b" }})
	if len(parsed.Interruptions) != 1 || parsed.Interruptions[0].Kind != kind {
		t.Errorf("parsed %+v; want one %s", parsed, kind)
	}
}

// TestKindNamesOnlyInTable: the names a kind is known by outside Drainpipe
// (setting, context key, event reason, rule, sample, detail-types) are
// written in the product's Go code only in this table and, for the
// detail-types, the parsers of this package: every other reader takes them
// from the table, so a new kind is its parser, one row and its fixtures.
func TestKindNamesOnlyInTable(t *testing.T) {
	root := filepath.Join("..", "..")
	var files []string
	for _, dir := range []string{"internal", "cmd", "infra", "tools"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || d.Name() == "cdk.out") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	table := filepath.Join(root, "internal", "event", "kinds.go")
	parsers := filepath.Join(root, "internal", "event")
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if f == table {
			continue
		}
		for _, r := range Table() {
			names := []string{r.Setting, r.ContextKey, r.Reason}
			if r.Rule != nil {
				names = append(names, r.Rule.ID)
			}
			if r.Sample != nil {
				names = append(names, r.Sample.Usage)
			}
			if filepath.Dir(f) != parsers {
				names = append(names, r.DetailTypes...)
			}
			for _, n := range names {
				if n != "" && strings.Contains(string(src), `"`+n+`"`) {
					t.Errorf("%s names %s's %q: read it from the kinds table", f, r.Kind, n)
				}
			}
		}
	}
}
