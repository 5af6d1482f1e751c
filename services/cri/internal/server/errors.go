package server

import (
	"errors"
	"fmt"

	"github.com/containerd/errdefs"
	"github.com/containerd/errdefs/pkg/errgrpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var (
	// ErrNotFound: no sandbox, container or image of that ID or name.
	ErrNotFound = errors.New("not found")
	// ErrAmbiguous: an ID prefix names more than one object.
	ErrAmbiguous = errors.New("ambiguous ID prefix")
	// ErrNotRunning: the container has no running process.
	ErrNotRunning = errors.New("container is not running")
	// ErrInvalid: the request lacks something it must have.
	ErrInvalid = errors.New("invalid request")
	// ErrPrivilegedRefused: a privileged container was asked for and the
	// runtime was started without --allow-privileged.
	ErrPrivilegedRefused = errors.New("privileged containers are not allowed on this node")
	// ErrExists: a sandbox or container of that name exists already.
	ErrExists = errors.New("name is reserved")
)

// toGRPC maps an error to the gRPC status the kubelet and crictl read:
// NotFound for a missing object (the kubelet treats it as gone), and the
// status containerd gave for its own errors. Nil stays nil.
func toGRPC(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok && !isWrapped(err) {
		return err
	}
	code := codes.Unknown
	switch {
	case errors.Is(err, ErrNotFound), errdefs.IsNotFound(err):
		code = codes.NotFound
	case errors.Is(err, ErrInvalid), errors.Is(err, ErrAmbiguous), errdefs.IsInvalidArgument(err):
		code = codes.InvalidArgument
	case errors.Is(err, ErrPrivilegedRefused):
		code = codes.PermissionDenied
	case errors.Is(err, ErrExists), errdefs.IsAlreadyExists(err):
		code = codes.AlreadyExists
	case errors.Is(err, ErrNotRunning), errdefs.IsFailedPrecondition(err):
		code = codes.FailedPrecondition
	case errdefs.IsUnavailable(err):
		code = codes.Unavailable
	case errdefs.IsDeadlineExceeded(err):
		code = codes.DeadlineExceeded
	case errdefs.IsCanceled(err):
		code = codes.Canceled
	}
	return status.Error(code, err.Error())
}

func isWrapped(err error) bool { return errors.Unwrap(err) != nil }

// isNotFound also reads the gRPC status of containerd's raw services.
func isNotFound(err error) bool {
	return errdefs.IsNotFound(err) || errdefs.IsNotFound(errgrpc.ToNative(err)) || errors.Is(err, ErrNotFound)
}

func notFoundf(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, ErrNotFound)...)
}
