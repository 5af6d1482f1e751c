package authn

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"podline.dev/services/apiserver/internal/request"
)

// Credentials are what a request presents.
type Credentials struct {
	// PeerCertificates is the TLS client's chain, leaf first (unverified:
	// the x509 authenticator verifies it).
	PeerCertificates []*x509.Certificate
	// BearerToken is the token of an "Authorization: Bearer" header or
	// gRPC "authorization" metadata.
	BearerToken string
}

// Empty reports whether nothing was presented.
func (c Credentials) Empty() bool { return len(c.PeerCertificates) == 0 && c.BearerToken == "" }

// BearerToken extracts the token from an Authorization value
// ("Bearer <token>"); it returns "" for any other scheme.
func BearerToken(authorization string) string {
	scheme, token, ok := strings.Cut(strings.TrimSpace(authorization), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// Authenticator recognises one kind of credential. It returns ok=false and
// no error when the credentials are not its kind, and an error when they
// are its kind but invalid.
type Authenticator interface {
	Authenticate(ctx context.Context, c Credentials) (u *request.User, ok bool, err error)
}

// Chain tries its authenticators in order, as kube-apiserver's union
// authenticator does: the first to recognise the credentials wins, and the
// user joins system:authenticated.
type Chain []Authenticator

// Authenticate returns the user, or an error wrapping ErrNoCredentials or
// the authenticators' reasons when no one accepted the credentials.
func (ch Chain) Authenticate(ctx context.Context, c Credentials) (*request.User, error) {
	if c.Empty() {
		return nil, ErrNoCredentials
	}
	var errs []error
	for _, a := range ch {
		u, ok, err := a.Authenticate(ctx, c)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			return withAuthenticated(u), nil
		}
	}
	if len(errs) == 0 {
		return nil, ErrNoCredentials
	}
	return nil, errors.Join(errs...)
}

// withAuthenticated adds system:authenticated unless the user has it.
func withAuthenticated(u *request.User) *request.User {
	if u.InGroup(request.AllAuthenticated) {
		return u
	}
	out := *u
	out.Groups = append(append([]string{}, u.Groups...), request.AllAuthenticated)
	return &out
}

// AnonymousUser is who a request without credentials is where anonymous
// access is allowed.
func AnonymousUser() *request.User {
	return &request.User{Name: request.Anonymous, Groups: []string{request.AllUnauthenticated}}
}

// Traced authenticates under an "authentication" span carrying the user,
// their groups and the decision, so a trace shows who a request was and why
// it was refused.
func Traced(ctx context.Context, a interface {
	Authenticate(context.Context, Credentials) (*request.User, error)
}, c Credentials) (*request.User, error) {
	ctx, span := otel.Tracer("podline.dev/apiserver/authn").Start(ctx, "authentication")
	defer span.End()
	u, err := a.Authenticate(ctx, c)
	if err != nil {
		span.SetAttributes(attribute.String("authn.decision", "unauthenticated"), attribute.String("authn.reason", err.Error()))
		span.SetStatus(codes.Error, "unauthenticated")
		return nil, err
	}
	span.SetAttributes(
		attribute.String("authn.decision", "authenticated"),
		attribute.String("user.name", u.Name),
		attribute.StringSlice("user.groups", u.Groups),
	)
	return u, nil
}

// describe is a short form of credentials for error messages.
func describe(cert *x509.Certificate) string {
	return fmt.Sprintf("CN=%q O=%q", cert.Subject.CommonName, cert.Subject.Organization)
}
