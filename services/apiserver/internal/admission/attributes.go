package admission

import (
	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
	"podline.dev/proto/apis"
	"podline.dev/services/apiserver/internal/request"
)

// Operation is the kind of write being admitted.
type Operation string

// Operations, named as Kubernetes' admission names them.
const (
	Create Operation = "CREATE"
	Update Operation = "UPDATE"
	Delete Operation = "DELETE"
)

// Attributes describe one write.
type Attributes struct {
	Operation Operation
	Resource  apis.Resource
	// Subresource is "status" for a status write, "" for the resource itself.
	Subresource string
	Namespace   string
	Name        string
	// Object is the object to store: nil on delete. Mutating plugins change it.
	Object object.Object
	// OldObject is the stored object on update and delete.
	OldObject object.Object
	// User is who sent the write; nil when authentication is off.
	User   *request.User
	DryRun bool

	warnings []string
}

// Warn adds a warning for the client (a Warning header over REST).
func (a *Attributes) Warn(msg string) { a.warnings = append(a.warnings, msg) }

// Warnings returns the warnings added so far.
func (a *Attributes) Warnings() []string { return a.warnings }

// Is reports whether the write is to the resource itself (not a
// subresource) of the given group and kind.
func (a *Attributes) Is(group, kind string) bool {
	return a.Subresource == "" && a.Resource.Group.Name == group && a.Resource.Kind == kind
}

// GR names the resource in error messages.
func (a *Attributes) GR() apierrors.GroupResource {
	return apierrors.GroupResource{Group: a.Resource.Group.Name, Resource: a.Resource.Name}
}

// Forbidden is Kubernetes' refusal of this write: `pods "x" is forbidden: <reason>`.
func (a *Attributes) Forbidden(reason string) error {
	return apierrors.NewForbidden(a.GR(), a.Name, reason)
}
