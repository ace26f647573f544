package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/notify"
	"github.com/drainpipe/drainpipe/internal/notify/webhook"
)

const webhookUsage = `usage: drainpipe webhook render [--reason TEXT]
       drainpipe webhook send [--secret ARN | --secret-file FILE] [--reason TEXT]

render prints the body a sample notice makes through the function's
template (DRAINPIPE_WEBHOOK_TEMPLATE; without one, Drainpipe's own
{"text": …}): the variables filled, JSON-escaped inside a JSON template's
strings. --reason sets the sample's reason, to try the characters a real
one holds.

send posts that body, as a test message, to the webhook the secret names
(--secret, default DRAINPIPE_WEBHOOK_SECRET_ARN: read with your AWS
credentials), with DRAINPIPE_WEBHOOK_HEADERS and the secret's own headers
and routing key; --secret-file reads a secret's value from a file instead
(a URL, or a JSON object of url, headers and routingKey), to try it
before storing it.

Exits 0 when rendered or accepted by the webhook, 1 when the webhook or
the secret fails, 2 for a template or headers the function would refuse.

Flags:`

func webhookCmd(ctx context.Context, c cli, args []string) int {
	fs := newFlags(c, "webhook", webhookUsage)
	reason := fs.String("reason", "", "the sample's reason (default a drained node's)")
	secretARN := fs.String("secret", c.Getenv(config.Prefix+"WEBHOOK_SECRET_ARN"), "the webhook secret's ARN (send)")
	secretFile := fs.String("secret-file", "", "a file holding a secret's value (send)")
	timeout := addTimeout(fs, 10*time.Second, "how long sending may take")
	verb, code := subcommand(fs, args, "render", "send")
	if code >= 0 {
		return code
	}
	rest, code := parseArgs(fs, args[1:])
	if code >= 0 {
		return code
	}
	var bad problems
	bad.none(rest)
	bad.timeout(*timeout)
	bad.add(verb == "render" && *secretFile != "", "--secret-file: only for send")
	opts, err := webhookOptions(c.Getenv)
	bad.add(err != nil, "%v", err)
	if code := bad.report(c, "webhook "+verb); code >= 0 {
		return code
	}
	d := webhook.Sample()
	d.Text = "Drainpipe: a test message from drainpipe webhook " + verb
	d.Description = d.Text
	if *reason != "" {
		d.Reason = *reason
	}
	if verb == "render" {
		b, err := notify.New(nil, opts).Render(d, notify.Extras{RoutingKey: "ROUTING-KEY-FROM-THE-SECRET"})
		if err != nil {
			fmt.Fprintf(c.Stderr, "drainpipe webhook render: %v\n", err)
			return exitUsage
		}
		fmt.Fprintln(c.Stdout, string(b))
		return exitOK
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	src, code := webhookSource(ctx, c, *secretARN, *secretFile)
	if code >= 0 {
		return code
	}
	opts.Timeout = *timeout
	if err := notify.New(src, opts).SendData(ctx, d); err != nil {
		fmt.Fprintf(c.Stderr, "drainpipe webhook send: %v\n", err)
		return exitFail
	}
	fmt.Fprintln(c.Stdout, "sent: the webhook accepted the test message")
	return exitOK
}

// webhookOptions are the template and headers the function would use.
func webhookOptions(getenv func(string) string) (notify.Options, error) {
	var o notify.Options
	if t := getenv(config.Prefix + "WEBHOOK_TEMPLATE"); t != "" {
		tmpl, err := webhook.ParseTemplate(t)
		if err != nil {
			return o, fmt.Errorf("%sWEBHOOK_TEMPLATE: %w", config.Prefix, err)
		}
		o.Template = tmpl
	}
	if h := getenv(config.Prefix + "WEBHOOK_HEADERS"); h != "" {
		headers, err := webhook.ParseHeaders(h)
		if err != nil {
			return o, fmt.Errorf("%sWEBHOOK_HEADERS: %w", config.Prefix, err)
		}
		o.Headers = headers
	}
	return o, nil
}

// webhookSource is the secret send posts through.
func webhookSource(ctx context.Context, c cli, arn, file string) (notify.URLSource, int) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintf(c.Stderr, "drainpipe webhook send: %v\n", err)
			return nil, exitUsage
		}
		src, err := notify.SecretValue(string(b))
		if err != nil {
			fmt.Fprintf(c.Stderr, "drainpipe webhook send: %s: %v\n", file, err)
			return nil, exitUsage
		}
		return src, -1
	}
	if arn == "" {
		fmt.Fprintf(c.Stderr, "drainpipe webhook send: give --secret ARN (or %sWEBHOOK_SECRET_ARN) or --secret-file FILE\n", config.Prefix)
		return nil, exitUsage
	}
	s, _ := start(c, "webhook send", startSpec{})
	defer s.end()
	if code := s.connect(ctx); code >= 0 {
		return nil, code
	}
	secret, err := notify.NewSecret(arn, s.aws)
	if err != nil {
		fmt.Fprintf(c.Stderr, "drainpipe webhook send: %v\n", err)
		return nil, exitUsage
	}
	return secret, -1
}
