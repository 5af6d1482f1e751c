// Package request carries what the request chain learns about a request
// (who sent it) to the stages after it: authentication fills it in,
// authorization, admission and audit read it.
package request

import "context"

// Well-known users and groups, as Kubernetes names them.
const (
	Anonymous          = "system:anonymous"
	AllUnauthenticated = "system:unauthenticated"
	AllAuthenticated   = "system:authenticated"
	Masters            = "system:masters"
	Nodes              = "system:nodes"
	NodeUserPrefix     = "system:node:"
)

// User is an authenticated identity.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// InGroup reports whether u is a member of group.
func (u *User) InGroup(group string) bool {
	for _, g := range u.Groups {
		if g == group {
			return true
		}
	}
	return false
}

type userKey struct{}

// WithUser returns ctx carrying u.
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the user ctx carries, if any.
func UserFrom(ctx context.Context) (*User, bool) {
	u, ok := ctx.Value(userKey{}).(*User)
	return u, ok && u != nil
}
