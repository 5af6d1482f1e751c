package authn

import (
	"context"
	"errors"
	"slices"

	"podline.dev/services/apiserver/internal/request"
)

// TokenAuthenticator authenticates a bearer token meant for one of
// audiences and returns those of them the token is for, as a TokenReview
// asks it. Like Authenticator, ok=false and no error means the token is
// not its kind.
type TokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string, audiences []string) (u *request.User, matched []string, ok bool, err error)
}

var _ TokenAuthenticator = (*ServiceAccountTokens)(nil)

// AudienceAgnostic makes an authenticator whose tokens name no audience
// (static tokens) answer for the apiserver's audiences: a token it knows
// is for those of them a review asks about, and for no other.
func AudienceAgnostic(a Authenticator, apiAudiences []string) TokenAuthenticator {
	return audienceAgnostic{a: a, apiAudiences: apiAudiences}
}

type audienceAgnostic struct {
	a            Authenticator
	apiAudiences []string
}

func (w audienceAgnostic) AuthenticateToken(ctx context.Context, token string, audiences []string) (*request.User, []string, bool, error) {
	var matched []string
	for _, a := range audiences {
		if slices.Contains(w.apiAudiences, a) {
			matched = append(matched, a)
		}
	}
	if len(matched) == 0 {
		return nil, nil, false, nil
	}
	u, ok, err := w.a.Authenticate(ctx, Credentials{BearerToken: token})
	if !ok || err != nil {
		return nil, nil, false, err
	}
	return u, matched, true, nil
}

// TokenChain is the apiserver's bearer-token authenticators, in order, for
// TokenReviews.
type TokenChain []TokenAuthenticator

// AuthenticateToken returns the user of token (in system:authenticated)
// and the audiences it is for, or an error wrapping ErrNoCredentials or
// the authenticators' reasons.
func (ch TokenChain) AuthenticateToken(ctx context.Context, token string, audiences []string) (*request.User, []string, error) {
	if token == "" {
		return nil, nil, ErrNoCredentials
	}
	var errs []error
	for _, a := range ch {
		u, matched, ok, err := a.AuthenticateToken(ctx, token, audiences)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			return withAuthenticated(u), matched, nil
		}
	}
	if len(errs) == 0 {
		return nil, nil, ErrNoCredentials
	}
	return nil, nil, errors.Join(errs...)
}
