package request

import "context"

// Info is what the transport knows about a request, for the audit log.
type Info struct {
	// URI is the REST path and query, or the gRPC method.
	URI       string
	SourceIP  string
	UserAgent string
	// Impersonator is who authenticated when the request acts as another
	// user (Impersonate-User); the request's user is the impersonated one.
	Impersonator *User
}

type infoKey struct{}

// WithInfo returns ctx carrying i.
func WithInfo(ctx context.Context, i Info) context.Context {
	return context.WithValue(ctx, infoKey{}, i)
}

// InfoFrom returns the Info ctx carries (zero if none).
func InfoFrom(ctx context.Context) Info {
	i, _ := ctx.Value(infoKey{}).(Info)
	return i
}
