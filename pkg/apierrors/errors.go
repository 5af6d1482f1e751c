package apierrors

import (
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/grpc/status"

	"podline.dev/pkg/field"
	metav1 "podline.dev/proto/meta/v1"
)

// Reasons, as in Kubernetes' metav1.StatusReason.
const (
	ReasonNotFound              = "NotFound"
	ReasonAlreadyExists         = "AlreadyExists"
	ReasonConflict              = "Conflict"
	ReasonGone                  = "Gone"
	ReasonExpired               = "Expired"
	ReasonInvalid               = "Invalid"
	ReasonBadRequest            = "BadRequest"
	ReasonUnauthorized          = "Unauthorized"
	ReasonForbidden             = "Forbidden"
	ReasonMethodNotAllowed      = "MethodNotAllowed"
	ReasonRequestEntityTooLarge = "RequestEntityTooLarge"
	ReasonUnsupportedMediaType  = "UnsupportedMediaType"
	ReasonNotAcceptable         = "NotAcceptable"
	ReasonTooManyRequests       = "TooManyRequests"
	ReasonInternalError         = "InternalError"
	ReasonServiceUnavailable    = "ServiceUnavailable"
	ReasonTimeout               = "Timeout"
	ReasonUnknown               = ""
)

// OptimisticLockErrorMsg is Kubernetes' message for a stale resourceVersion.
const OptimisticLockErrorMsg = "the object has been modified; please apply your changes to the latest version and try again"

// StatusError is an error that carries a Kubernetes Status.
type StatusError struct {
	ErrStatus *metav1.Status
}

func (e *StatusError) Error() string { return e.ErrStatus.GetMessage() }

// Status returns the Status, filled with apiVersion and kind.
func (e *StatusError) Status() *metav1.Status { return e.ErrStatus }

// GRPCStatus lets grpc-go send the error with its code and the Status as a detail.
func (e *StatusError) GRPCStatus() *status.Status {
	st := status.New(GRPCCode(e.ErrStatus), e.ErrStatus.GetMessage())
	if withDetails, err := st.WithDetails(e.ErrStatus); err == nil {
		return withDetails
	}
	return st
}

// GroupResource names a resource in messages: "pods", "deployments.apps".
type GroupResource struct {
	Group    string
	Resource string
}

func (gr GroupResource) String() string {
	if gr.Group == "" {
		return gr.Resource
	}
	return gr.Resource + "." + gr.Group
}

func newStatus(code int32, reason, message string, details *metav1.StatusDetails) *StatusError {
	return &StatusError{ErrStatus: &metav1.Status{
		ApiVersion: "v1",
		Kind:       "Status",
		Metadata:   &metav1.ListMeta{},
		Status:     "Failure",
		Code:       code,
		Reason:     reason,
		Message:    message,
		Details:    details,
	}}
}

func details(gr GroupResource, name string) *metav1.StatusDetails {
	return &metav1.StatusDetails{Name: name, Group: gr.Group, Kind: gr.Resource}
}

// NewNotFound: `pods "web" not found`.
func NewNotFound(gr GroupResource, name string) *StatusError {
	return newStatus(http.StatusNotFound, ReasonNotFound, fmt.Sprintf("%s %q not found", gr, name), details(gr, name))
}

// NewAlreadyExists: `pods "web" already exists`.
func NewAlreadyExists(gr GroupResource, name string) *StatusError {
	return newStatus(http.StatusConflict, ReasonAlreadyExists, fmt.Sprintf("%s %q already exists", gr, name), details(gr, name))
}

// NewConflict: `Operation cannot be fulfilled on deployments.apps "web": <reason>`.
func NewConflict(gr GroupResource, name string, reason string) *StatusError {
	return newStatus(http.StatusConflict, ReasonConflict,
		fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", gr, name, reason), details(gr, name))
}

// NewOptimisticLock is the Conflict of an update or delete with a stale resourceVersion.
func NewOptimisticLock(gr GroupResource, name string) *StatusError {
	return NewConflict(gr, name, OptimisticLockErrorMsg)
}

// NewResourceExpired is the 410 of a watch or list from a compacted revision.
func NewResourceExpired(message string) *StatusError {
	return newStatus(http.StatusGone, ReasonExpired, message, nil)
}

// NewGone is a 410 for a resource that is gone for good.
func NewGone(message string) *StatusError {
	return newStatus(http.StatusGone, ReasonGone, message, nil)
}

// NewInvalid: `Deployment.apps "web" is invalid: [a, b]` with one cause per field.
func NewInvalid(kind GroupKind, name string, errs field.ErrorList) *StatusError {
	causes := make([]*metav1.StatusCause, 0, len(errs))
	for _, e := range errs {
		causes = append(causes, &metav1.StatusCause{Reason: string(e.Type), Message: e.ErrorBody(), Field: e.Field})
	}
	return newStatus(http.StatusUnprocessableEntity, ReasonInvalid,
		fmt.Sprintf("%s %q is invalid: %s", kind, name, errs.Error()),
		&metav1.StatusDetails{Name: name, Group: kind.Group, Kind: kind.Kind, Causes: causes})
}

// GroupKind names a kind in Invalid messages: "Pod", "Deployment.apps".
type GroupKind struct {
	Group string
	Kind  string
}

func (gk GroupKind) String() string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

// NewBadRequest is a 400 with the given message.
func NewBadRequest(message string) *StatusError {
	return newStatus(http.StatusBadRequest, ReasonBadRequest, message, nil)
}

// NewBadRequestField is a 400 whose cause names the offending field.
func NewBadRequestField(message string, errs field.ErrorList) *StatusError {
	e := NewBadRequest(message)
	d := &metav1.StatusDetails{}
	for _, fe := range errs {
		d.Causes = append(d.Causes, &metav1.StatusCause{Reason: string(fe.Type), Message: fe.ErrorBody(), Field: fe.Field})
	}
	e.ErrStatus.Details = d
	return e
}

// NewUnauthorized is a 401.
func NewUnauthorized(message string) *StatusError {
	if message == "" {
		message = "Unauthorized"
	}
	return newStatus(http.StatusUnauthorized, ReasonUnauthorized, message, nil)
}

// NewForbidden: `pods "web" is forbidden: <reason>`, or `pods is forbidden: ...` without a name.
func NewForbidden(gr GroupResource, name string, reason string) *StatusError {
	subject := gr.String()
	if name != "" {
		subject = fmt.Sprintf("%s %q", gr, name)
	}
	return newStatus(http.StatusForbidden, ReasonForbidden, fmt.Sprintf("%s is forbidden: %s", subject, reason), details(gr, name))
}

// NewMethodNotSupported: `create is not supported on resources of kind "nodes/status"`.
func NewMethodNotSupported(gr GroupResource, action string) *StatusError {
	return newStatus(http.StatusMethodNotAllowed, ReasonMethodNotAllowed,
		fmt.Sprintf("%s is not supported on resources of kind %q", action, gr), details(gr, ""))
}

// NewRequestEntityTooLarge is a 413.
func NewRequestEntityTooLarge(message string) *StatusError {
	return newStatus(http.StatusRequestEntityTooLarge, ReasonRequestEntityTooLarge,
		"Request entity too large: "+message, nil)
}

// NewUnsupportedMediaType is a 415 for a Content-Type the endpoint does not take.
func NewUnsupportedMediaType(contentType string) *StatusError {
	return newStatus(http.StatusUnsupportedMediaType, ReasonUnsupportedMediaType,
		fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (got %q)", contentType), nil)
}

// NewTooManyRequests is a 429 with a retry hint.
func NewTooManyRequests(message string, retryAfterSeconds int32) *StatusError {
	return newStatus(http.StatusTooManyRequests, ReasonTooManyRequests, message,
		&metav1.StatusDetails{RetryAfterSeconds: retryAfterSeconds})
}

// NewInternalError: `Internal error occurred: <err>`.
func NewInternalError(err error) *StatusError {
	return newStatus(http.StatusInternalServerError, ReasonInternalError,
		fmt.Sprintf("Internal error occurred: %v", err),
		&metav1.StatusDetails{Causes: []*metav1.StatusCause{{Message: err.Error()}}})
}

// NewServiceUnavailable is a 503, as when etcd has no quorum.
func NewServiceUnavailable(message string) *StatusError {
	return newStatus(http.StatusServiceUnavailable, ReasonServiceUnavailable, message, nil)
}

// NewTimeout is a 504 for a call that did not finish in time.
func NewTimeout(message string, retryAfterSeconds int32) *StatusError {
	return newStatus(http.StatusGatewayTimeout, ReasonTimeout, message,
		&metav1.StatusDetails{RetryAfterSeconds: retryAfterSeconds})
}

// FromError returns err as a *StatusError: itself, the Status carried in a
// gRPC status, or a Status made from a gRPC code. It returns nil for nil.
func FromError(err error) *StatusError {
	if err == nil {
		return nil
	}
	var se *StatusError
	if errors.As(err, &se) {
		return se
	}
	st, ok := status.FromError(err)
	if !ok {
		return NewInternalError(err)
	}
	for _, d := range st.Details() {
		if s, ok := d.(*metav1.Status); ok {
			return &StatusError{ErrStatus: s}
		}
	}
	return fromCode(st.Code(), st.Message())
}

// ReasonForError is the Status reason of err, or "" when it is no API error.
func ReasonForError(err error) string {
	if err == nil {
		return ReasonUnknown
	}
	return FromError(err).ErrStatus.GetReason()
}

func IsNotFound(err error) bool           { return ReasonForError(err) == ReasonNotFound }
func IsAlreadyExists(err error) bool      { return ReasonForError(err) == ReasonAlreadyExists }
func IsConflict(err error) bool           { return ReasonForError(err) == ReasonConflict }
func IsResourceExpired(err error) bool    { return ReasonForError(err) == ReasonExpired }
func IsGone(err error) bool               { return ReasonForError(err) == ReasonGone }
func IsInvalid(err error) bool            { return ReasonForError(err) == ReasonInvalid }
func IsBadRequest(err error) bool         { return ReasonForError(err) == ReasonBadRequest }
func IsUnauthorized(err error) bool       { return ReasonForError(err) == ReasonUnauthorized }
func IsForbidden(err error) bool          { return ReasonForError(err) == ReasonForbidden }
func IsTooManyRequests(err error) bool    { return ReasonForError(err) == ReasonTooManyRequests }
func IsServiceUnavailable(err error) bool { return ReasonForError(err) == ReasonServiceUnavailable }
func IsTimeout(err error) bool            { return ReasonForError(err) == ReasonTimeout }

// IsTooOld reports a 410 of either reason: the client must relist.
func IsTooOld(err error) bool { return IsResourceExpired(err) || IsGone(err) }
