package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
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

	mu  sync.Mutex
	url *url.URL
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
	u, err := parseWebhook(raw)
	if err != nil {
		return nil, fmt.Errorf("reading webhook URL from %s: %w", s.arn, err)
	}
	s.url = u
	return u, nil
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

// parseWebhook takes the secret's value: the URL itself, or a JSON object
// with a "url" (or "webhook_url") member. Errors never quote the value.
func parseWebhook(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if strings.HasPrefix(raw, "{") {
		var obj map[string]string
		if err := json.Unmarshal([]byte(raw), &obj); err != nil {
			return nil, errors.New("the value is neither a URL nor a JSON object of strings")
		}
		raw = obj["url"]
		if raw == "" {
			raw = obj["webhook_url"]
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, errors.New("the value is not an absolute URL")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
		// A receiver on this machine (tests, a local relay).
	default:
		return nil, errors.New("the URL must use https")
	}
	return u, nil
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}
