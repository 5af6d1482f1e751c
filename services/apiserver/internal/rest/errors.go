package rest

import (
	"context"
	"net/http"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/k8sjson"
)

// writeStatus writes a Status error with its HTTP code.
func writeStatus(w http.ResponseWriter, se *apierrors.StatusError) {
	body, err := k8sjson.Marshal(se.Status())
	if err != nil {
		http.Error(w, se.Error(), int(se.Status().GetCode()))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(se.Status().GetCode()))
	_, _ = w.Write(append(body, '\n'))
}

// errorHandler answers every failed call with the Status it carries; a
// decode error recorded by the decoder wins over the gateway's generic one.
func errorHandler(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	if st := stateOf(r.Context()); st != nil && st.decodeErr != nil {
		writeStatus(w, st.decodeErr)
		return
	}
	writeStatus(w, apierrors.FromError(err))
}

// routingErrorHandler answers unknown paths and methods as Kubernetes does.
func routingErrorHandler(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, code int) {
	switch code {
	case http.StatusMethodNotAllowed:
		writeStatus(w, apierrors.NewMethodNotSupported(apierrors.GroupResource{Resource: r.URL.Path}, r.Method))
	default:
		writeStatus(w, notFound())
	}
}

func notFound() *apierrors.StatusError {
	se := apierrors.NewNotFound(apierrors.GroupResource{}, "")
	se.ErrStatus.Message = "the server could not find the requested resource"
	se.ErrStatus.Details = nil
	return se
}

// notAcceptable is kube-apiserver's 406 for an Accept header it cannot
// satisfy (pkg/apierrors has no constructor for it yet).
func notAcceptable() *apierrors.StatusError {
	se := apierrors.NewBadRequest("only the following media types are accepted: application/json")
	se.ErrStatus.Code = http.StatusNotAcceptable
	se.ErrStatus.Reason = apierrors.ReasonNotAcceptable
	return se
}
