package notify

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/drainpipe/drainpipe/internal/notify/webhook"
)

// SecretsManager reads a secret; *secretsmanager.Client satisfies it.
type SecretsManager interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// Parameters reads a parameter; *ssm.Client satisfies it.
type Parameters interface {
	GetParameter(ctx context.Context, in *ssm.GetParameterInput, opts ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

var (
	_ SecretsManager = (*secretsmanager.Client)(nil)
	_ Parameters     = (*ssm.Client)(nil)
)

// ValidateARN accepts the ARN of a Secrets Manager secret or of a Systems
// Manager parameter.
func ValidateARN(s string) error {
	a, err := arn.Parse(s)
	if err != nil {
		return fmt.Errorf("parsing webhook secret ARN: %w", err)
	}
	switch {
	case a.Region == "" || a.AccountID == "":
		return fmt.Errorf("webhook secret ARN %q has no region or account", s)
	case a.Service == "secretsmanager" && strings.HasPrefix(a.Resource, "secret:") && len(a.Resource) > len("secret:"):
		return nil
	case a.Service == "ssm" && strings.HasPrefix(a.Resource, "parameter/") && len(a.Resource) > len("parameter/"):
		return nil
	}
	return fmt.Errorf("webhook secret ARN %q names neither a Secrets Manager secret nor an SSM parameter", s)
}

// Secret is the webhook URL read by ARN from Secrets Manager or SSM
// Parameter Store: lazily on first use, then cached for the life of the
// container. A failed read is not cached: the next use tries again.
type Secret struct {
	arn     string
	service string
	sm      SecretsManager
	ssm     Parameters

	mu     sync.Mutex
	url    *url.URL
	extras Extras
}

// Extras are what a secret holding a JSON object may carry besides the
// URL: headers (an authorization, a PagerDuty or Teams key) and a routing
// key, kept out of the function's plain environment.
type Extras struct {
	Headers    http.Header
	RoutingKey string
}

// NewSecret returns the secret named by secretARN, read with clients made
// from cfg in the ARN's region.
func NewSecret(secretARN string, cfg aws.Config) (*Secret, error) {
	if err := ValidateARN(secretARN); err != nil {
		return nil, err
	}
	a, _ := arn.Parse(secretARN)
	region := func(o *string) { *o = a.Region }
	return NewSecretWith(secretARN,
		secretsmanager.NewFromConfig(cfg, func(o *secretsmanager.Options) { region(&o.Region) }),
		ssm.NewFromConfig(cfg, func(o *ssm.Options) { region(&o.Region) }))
}

// NewSecretWith is NewSecret with given clients (tests).
func NewSecretWith(secretARN string, sm SecretsManager, params Parameters) (*Secret, error) {
	if err := ValidateARN(secretARN); err != nil {
		return nil, err
	}
	a, _ := arn.Parse(secretARN)
	return &Secret{arn: secretARN, service: a.Service, sm: sm, ssm: params}, nil
}

// LogValue names the secret by ARN, never by value.
func (s *Secret) LogValue() slog.Value { return slog.StringValue(s.arn) }

// URL returns the webhook URL, reading it on first use.
func (s *Secret) URL(ctx context.Context) (*url.URL, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.url != nil {
		return s.url, nil
	}
	raw, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	u, extras, err := parseSecret(raw)
	if err != nil {
		return nil, fmt.Errorf("reading webhook URL from %s: %w", s.arn, err)
	}
	s.url, s.extras = u, extras
	return u, nil
}

// Extras returns the headers and routing key the secret holds, once URL
// has read it.
func (s *Secret) Extras() Extras {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.extras
}

func (s *Secret) read(ctx context.Context) (string, error) {
	if s.service == "ssm" {
		out, err := s.ssm.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(s.arn), WithDecryption: aws.Bool(true)})
		if err != nil {
			return "", fmt.Errorf("getting parameter %s: %w", s.arn, err)
		}
		if out.Parameter == nil || out.Parameter.Value == nil {
			return "", fmt.Errorf("getting parameter %s: no value", s.arn)
		}
		return *out.Parameter.Value, nil
	}
	out, err := s.sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(s.arn)})
	if err != nil {
		return "", fmt.Errorf("getting secret %s: %w", s.arn, err)
	}
	if out.SecretString == nil {
		return "", fmt.Errorf("getting secret %s: no string value", s.arn)
	}
	return *out.SecretString, nil
}

// SecretValue is a source holding a secret's value given directly (a
// URL, or the JSON object a secret may hold), for trying one before it is
// stored. Errors never quote the value.
func SecretValue(raw string) (URLSource, error) {
	u, x, err := parseSecret(raw)
	if err != nil {
		return nil, err
	}
	return value{u, x}, nil
}

type value struct {
	u *url.URL
	x Extras
}

func (v value) URL(context.Context) (*url.URL, error) { return v.u, nil }
func (v value) Extras() Extras                        { return v.x }

// parseWebhook is parseSecret's URL.
func parseWebhook(raw string) (*url.URL, error) {
	u, _, err := parseSecret(raw)
	return u, err
}

// secretObject is a secret's value as a JSON object.
type secretObject struct {
	URL           string          `json:"url"`
	WebhookURL    string          `json:"webhook_url"`
	Headers       json.RawMessage `json:"headers"`
	RoutingKey    string          `json:"routingKey"`
	RoutingKeyAlt string          `json:"routing_key"`
}

// parseSecret takes the secret's value: the URL itself, or a JSON object
// with a "url" (or "webhook_url") member, and optionally "headers" (an
// object of header names to values, checked as DRAINPIPE_WEBHOOK_HEADERS
// is) and "routingKey" ("routing_key"). Errors never quote the value.
func parseSecret(raw string) (*url.URL, Extras, error) {
	var extras Extras
	raw = strings.TrimSpace(raw)
	if strings.HasPrefix(raw, "{") {
		var obj secretObject
		if err := json.Unmarshal([]byte(raw), &obj); err != nil {
			return nil, extras, errors.New("the value is neither a URL nor a JSON object of a url, headers and a routing key")
		}
		raw = cmp.Or(obj.URL, obj.WebhookURL)
		extras.RoutingKey = cmp.Or(obj.RoutingKey, obj.RoutingKeyAlt)
		if len(obj.Headers) > 0 {
			h, err := webhook.ParseHeaders(string(obj.Headers))
			if err != nil {
				return nil, extras, fmt.Errorf("the secret's headers: %w", err)
			}
			h.Del("Content-Type") // the default: DRAINPIPE_WEBHOOK_HEADERS may set another
			extras.Headers = h
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, extras, errors.New("the value is not an absolute URL")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
		// A receiver on this machine (tests, a local relay).
	default:
		return nil, extras, errors.New("the URL must use https")
	}
	return u, extras, nil
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}
