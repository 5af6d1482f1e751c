package storage

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var (
	// ErrNotFound: no value at the key.
	ErrNotFound = errors.New("storage: key not found")
	// ErrExists: a create found the key taken.
	ErrExists = errors.New("storage: key exists")
	// ErrConflict: the object changed since the version the caller holds.
	ErrConflict = errors.New("storage: resource version conflict")
	// ErrCompacted: the revision asked for was compacted away.
	ErrCompacted = errors.New("storage: revision compacted")
	// ErrUnavailable: etcd cannot serve the request now (no quorum, no leader, timeout).
	ErrUnavailable = errors.New("storage: etcd unavailable")
)

// classify turns an etcd client error into one of the sentinels, keeping the cause.
func classify(err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, rpctypes.ErrCompacted), errors.Is(err, rpctypes.ErrGRPCCompacted):
		return fmt.Errorf("%w: %v", ErrCompacted, err)
	case errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, rpctypes.ErrTimeout), errors.Is(err, rpctypes.ErrGRPCTimeout),
		errors.Is(err, rpctypes.ErrNoLeader), errors.Is(err, rpctypes.ErrGRPCNoLeader),
		errors.Is(err, rpctypes.ErrTimeoutDueToLeaderFail), errors.Is(err, rpctypes.ErrTimeoutDueToConnectionLost):
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if st, ok := status.FromError(err); ok {
		switch st.Code() {
		case codes.Unavailable, codes.DeadlineExceeded:
			return fmt.Errorf("%w: %v", ErrUnavailable, err)
		case codes.OutOfRange:
			return fmt.Errorf("%w: %v", ErrCompacted, err)
		}
	}
	return err
}
