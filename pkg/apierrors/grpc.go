package apierrors

import (
	"net/http"

	"google.golang.org/grpc/codes"

	metav1 "podline.dev/proto/meta/v1"
)

// GRPCCode maps a Status to the gRPC code a gRPC client sees.
func GRPCCode(s *metav1.Status) codes.Code {
	switch s.GetReason() {
	case ReasonNotFound:
		return codes.NotFound
	case ReasonAlreadyExists:
		return codes.AlreadyExists
	case ReasonConflict:
		return codes.Aborted
	case ReasonGone, ReasonExpired:
		return codes.OutOfRange
	case ReasonInvalid, ReasonBadRequest, ReasonUnsupportedMediaType, ReasonNotAcceptable:
		return codes.InvalidArgument
	case ReasonUnauthorized:
		return codes.Unauthenticated
	case ReasonForbidden:
		return codes.PermissionDenied
	case ReasonMethodNotAllowed:
		return codes.Unimplemented
	case ReasonRequestEntityTooLarge, ReasonTooManyRequests:
		return codes.ResourceExhausted
	case ReasonServiceUnavailable:
		return codes.Unavailable
	case ReasonTimeout:
		return codes.DeadlineExceeded
	case ReasonInternalError:
		return codes.Internal
	}
	return codes.Unknown
}

// fromCode makes a Status for a gRPC error that carried none (a transport
// failure, a deadline): the reverse of GRPCCode.
func fromCode(c codes.Code, msg string) *StatusError {
	switch c {
	case codes.NotFound:
		return newStatus(http.StatusNotFound, ReasonNotFound, msg, nil)
	case codes.AlreadyExists:
		return newStatus(http.StatusConflict, ReasonAlreadyExists, msg, nil)
	case codes.Aborted:
		return newStatus(http.StatusConflict, ReasonConflict, msg, nil)
	case codes.OutOfRange:
		return NewResourceExpired(msg)
	case codes.InvalidArgument:
		return NewBadRequest(msg)
	case codes.Unauthenticated:
		return NewUnauthorized(msg)
	case codes.PermissionDenied:
		return newStatus(http.StatusForbidden, ReasonForbidden, msg, nil)
	case codes.Unimplemented:
		return newStatus(http.StatusMethodNotAllowed, ReasonMethodNotAllowed, msg, nil)
	case codes.ResourceExhausted:
		return NewTooManyRequests(msg, 1)
	case codes.Unavailable:
		return NewServiceUnavailable(msg)
	case codes.DeadlineExceeded, codes.Canceled:
		return NewTimeout(msg, 1)
	}
	return newStatus(http.StatusInternalServerError, ReasonInternalError, msg, nil)
}
