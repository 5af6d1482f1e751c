package admission

import (
	"context"

	"podline.dev/pkg/object"
)

// Mutator is a mutating plugin: it may change a.Object (nil on delete). It
// reports whether it did, so the admission span can name it.
type Mutator interface {
	Name() string
	Admit(ctx context.Context, a *Attributes) (mutated bool, err error)
}

// Validator is a validating plugin: it accepts or refuses a write without
// changing it.
type Validator interface {
	Name() string
	Validate(ctx context.Context, a *Attributes) error
}

// Getter reads one object of a resource ("" namespace for cluster-scoped
// kinds); a missing object is an apierrors NotFound.
type Getter interface {
	Get(ctx context.Context, namespace, name string) (object.Object, error)
}

// Lister lists the objects of a resource in one namespace ("" for all).
// Objects are shared: callers must not change them.
type Lister interface {
	List(ctx context.Context, namespace string) ([]object.Object, error)
}
