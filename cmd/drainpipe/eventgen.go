package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
)

// The SAM CLI's emulator runs every function as
// arn:aws:lambda:us-east-1:012345678912:function:NAME, whatever the
// template or --region say: events made for it must come from there, or
// the function rejects them as another account's.
const (
	samAccount = "012345678912"
	samRegion  = "us-east-1"
)

// eventUsage is the command's help, its kinds from the kinds table:
// Auto Scaling's lifecycle actions last, as they share their flags.
func eventUsage() string {
	samples := event.Samples()
	slices.SortStableFunc(samples, func(a, b event.KindInfo) int {
		return cmp.Compare(autoScaling(a), autoScaling(b))
	})
	var kinds strings.Builder
	for _, r := range samples {
		fmt.Fprintf(&kinds, "  %-20s  %s\n", r.Sample.Name, r.Sample.Usage)
	}
	return `usage: drainpipe event KIND [flags]

Writes a fresh event of KIND to standard output, as AWS would send it now:
one EventBridge event (the SQS message body), or with --sqs a Lambda SQS
event carrying it (for 'sam local invoke -e', 'aws lambda invoke' or
'drainpipe run'). KIND is one of:
` + kinds.String() + `
The account and region default to the SAM emulator's (012345678912,
us-east-1), so the event passes the function's account and region check
under 'sam local invoke'; give your own for a deployed function.

Exits 0 when the event is written, 1 when it cannot be, 2 for an unknown
KIND, a --in the kind cannot have, or a value AWS would never send.

Flags:`
}

// eventSpec is what one generated event says.
type eventSpec struct {
	kind, instance, account, region, token, group, hook, state, reservation, queue string
	in                                                                             time.Duration
	inSet                                                                          bool
	now                                                                            time.Time
}

// eventKinds are the kinds `drainpipe event` writes, by name.
var eventKinds = sampleKinds()

func sampleKinds() map[string]event.KindInfo {
	m := map[string]event.KindInfo{}
	for _, r := range event.Samples() {
		m[r.Sample.Name] = r
	}
	return m
}

// makeEvent is `drainpipe event`.
func makeEvent(_ context.Context, c cli, args []string) int {
	fs := newFlags(c, "event", eventUsage())
	var s eventSpec
	fs.StringVar(&s.instance, "instance", "i-0123456789abcdef0", "the instance the event names")
	fs.StringVar(&s.account, "account", samAccount, "the AWS account the event comes from")
	fs.StringVar(&s.region, "region", samRegion, "the region the event comes from")
	fs.StringVar(&s.token, "token", "", "the lifecycle action token (asg-*; default a new UUID)")
	fs.StringVar(&s.group, "group", "my-asg", "the Auto Scaling group (asg-*)")
	fs.StringVar(&s.hook, "hook", "drainpipe", "the lifecycle hook's name (asg-*)")
	fs.StringVar(&s.state, "state", "stopping", "the instance state (state-change): stopping, stopped, shutting-down, terminated, pending, running")
	fs.StringVar(&s.reservation, "reservation", "cr-0123456789abcdef0", "the Capacity Block's reservation id (capacity-block)")
	fs.StringVar(&s.queue, "queue-name", "Drainpipe", "the queue named in eventSourceARN (--sqs)")
	in := fs.Duration("in", 0, "time left before the instance goes (the event's deadline), e.g. 2m")
	wrap := fs.Bool("sqs", false, "write a Lambda SQS event carrying the message")
	at := fs.String("at", "", "the moment the event is sent, RFC 3339 such as "+timeExample+" (default now)")
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(c.Stderr, "drainpipe event: "+format+"\n", a...)
		return exitUsage
	}
	kinds := strings.Join(slices.Sorted(maps.Keys(eventKinds)), ", ")
	if len(rest) != 1 {
		return fail("want one KIND (%s), got %d arguments", kinds, len(rest))
	}
	s.kind = rest[0]
	if _, ok := eventKinds[s.kind]; !ok {
		return fail("unknown KIND %q: want one of %s", s.kind, kinds)
	}
	s.now = time.Now().UTC().Truncate(time.Second)
	if *at != "" {
		t, err := parseTime("--at", *at)
		if err != nil {
			return fail("%v", err)
		}
		s.now = t.UTC()
	}
	s.in, s.inSet = *in, flagSet(fs, "in")
	body, err := s.body()
	if err != nil {
		return fail("%v", err)
	}
	// What we write must be what the function accepts.
	if _, err := event.Parse(body); err != nil {
		return fail("the event made is not valid: %v", err)
	}
	out := body
	if *wrap {
		if out, err = s.sqsEvent(body); err != nil {
			return fail("%v", err)
		}
	}
	st, _ := start(c, "event", startSpec{})
	defer st.end()
	if _, err := fmt.Fprintf(c.Stdout, "%s\n", out); err != nil {
		return st.failf(exitFail, "writing: %w", err)
	}
	return exitOK
}

// autoScaling is 1 for a kind Auto Scaling sends, else 0.
func autoScaling(r event.KindInfo) int {
	if r.Source == "aws.autoscaling" {
		return 1
	}
	return 0
}

// flagSet reports whether the flag was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
