package eks

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// tokenSource is what the transport needs from a Signer.
type tokenSource interface {
	Token(ctx context.Context, cluster string) (Token, error)
	Invalidate(cluster string, t Token)
}

var _ tokenSource = (*Signer)(nil)

// bearer sets a fresh EKS token on every request. Client-go's exec
// credential plugins are no option in a Lambda, so the token comes from
// the Signer: re-signed before it ages out, and re-signed once more when
// the API server answers 401 (clock skew, a token the server saw expire),
// after which the request is sent again.
type bearer struct {
	base    http.RoundTripper
	cluster string
	tokens  tokenSource
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := b.tokens.Token(req.Context(), b.cluster)
	if err != nil {
		return nil, fmt.Errorf("authenticating to cluster %s: %w", b.cluster, err)
	}
	resp, err := b.base.RoundTrip(withToken(req, tok, req.Body))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	body := req.Body
	if body != nil && body != http.NoBody {
		if req.GetBody == nil {
			return resp, nil // the body is spent and can't be replayed
		}
		if body, err = req.GetBody(); err != nil {
			return resp, nil
		}
	}
	b.tokens.Invalidate(b.cluster, tok)
	fresh, err := b.tokens.Token(req.Context(), b.cluster)
	if err != nil {
		return resp, nil // let the caller see the 401
	}
	// Drain so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	_ = resp.Body.Close()
	return b.base.RoundTrip(withToken(req, fresh, body))
}

// withToken returns a copy of req carrying tok; a RoundTripper must not
// modify the request it is given.
func withToken(req *http.Request, tok Token, body io.ReadCloser) *http.Request {
	r := req.Clone(req.Context())
	r.Body = body
	r.Header.Set("Authorization", "Bearer "+tok.Bearer())
	return r
}
