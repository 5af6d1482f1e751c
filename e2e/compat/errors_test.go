package compat

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/watch"
)

var (
	errClosed  = errors.New("watch closed without an event")
	errNoEvent = errors.New("no watch event within 2s")
)

type unexpectedEvent struct{ ev watch.Event }

func (e *unexpectedEvent) Error() string {
	return fmt.Sprintf("watch sent %s %T, want an ERROR event", e.ev.Type, e.ev.Object)
}
