package rest

import (
	"context"
	"io"
	"net/http"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/k8sjson"
)

// requestState carries what the gateway's fixed call path cannot: the
// fieldValidation mode for the decoder, the decoder's warnings for the
// response, and a decode error with its field causes for the error handler.
type requestState struct {
	validation k8sjson.FieldValidation
	warnings   []string
	decodeErr  *apierrors.StatusError
}

type stateKey struct{}

func withState(r *http.Request, st *requestState) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), stateKey{}, st))
}

func stateOf(ctx context.Context) *requestState {
	st, _ := ctx.Value(stateKey{}).(*requestState)
	return st
}

// stateBody is the request body as the decoder sees it: the decoder finds
// the request's state through it, since the gateway hands it only a reader.
type stateBody struct {
	io.ReadCloser
	state *requestState
}
