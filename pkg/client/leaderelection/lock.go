package leaderelection

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/object"
	coordinationv1 "podline.dev/proto/coordination/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// Lock is the record candidates compete for. Update must fail (with
// ErrLockConflict) when the record changed since the last Get or Create.
type Lock interface {
	// Get reads the record; ErrLockNotFound when there is none.
	Get(ctx context.Context) (Record, error)
	// Create writes the first record; it fails if one exists.
	Create(ctx context.Context, r Record) error
	// Update replaces the record read last.
	Update(ctx context.Context, r Record) error
	// Identity is this candidate's holderIdentity.
	Identity() string
	// Describe names the lock in logs ("kube-system/kube-scheduler").
	Describe() string
}

// LeaseLock is a Lock on a coordination.k8s.io/v1 Lease.
type LeaseLock struct {
	leases    *client.Client[*coordinationv1.Lease]
	namespace string
	name      string
	identity  string

	mu    sync.Mutex
	lease *coordinationv1.Lease // as last read or written; its resourceVersion guards Update
}

var _ Lock = (*LeaseLock)(nil)

// NewLeaseLock returns a Lock on the Lease namespace/name held as identity
// (DefaultIdentity() in components).
func NewLeaseLock(conn grpc.ClientConnInterface, namespace, name, identity string) *LeaseLock {
	return &LeaseLock{leases: client.Leases(conn), namespace: namespace, name: name, identity: identity}
}

func (l *LeaseLock) Identity() string { return l.identity }
func (l *LeaseLock) Describe() string { return l.namespace + "/" + l.name }

func (l *LeaseLock) Get(ctx context.Context) (Record, error) {
	lease, err := l.leases.Get(ctx, l.namespace, l.name)
	if apierrors.IsNotFound(err) {
		return Record{}, fmt.Errorf("%w: lease %s: %v", ErrLockNotFound, l.Describe(), err)
	}
	if err != nil {
		return Record{}, err
	}
	l.mu.Lock()
	l.lease = lease
	l.mu.Unlock()
	return recordOf(lease.GetSpec()), nil
}

func (l *LeaseLock) Create(ctx context.Context, r Record) error {
	lease := &coordinationv1.Lease{
		Metadata: &metav1.ObjectMeta{Namespace: l.namespace, Name: l.name},
		Spec:     specOf(r),
	}
	out, err := l.leases.Create(ctx, lease)
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("%w: %v", ErrLockConflict, err)
	}
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.lease = out
	l.mu.Unlock()
	return nil
}

func (l *LeaseLock) Update(ctx context.Context, r Record) error {
	l.mu.Lock()
	cur := l.lease
	l.mu.Unlock()
	if cur == nil {
		return fmt.Errorf("%w: lease %s has not been read", ErrLockConflict, l.Describe())
	}
	next := object.Copy(cur)
	next.Spec = specOf(r)
	out, err := l.leases.Update(ctx, next) // metadata.resourceVersion is the precondition
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: %v", ErrLockConflict, err)
	}
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.lease = out
	l.mu.Unlock()
	return nil
}

func recordOf(s *coordinationv1.LeaseSpec) Record {
	return Record{
		HolderIdentity:       s.GetHolderIdentity(),
		LeaseDurationSeconds: s.GetLeaseDurationSeconds(),
		AcquireTime:          microTime(s.GetAcquireTime()),
		RenewTime:            microTime(s.GetRenewTime()),
		LeaderTransitions:    s.GetLeaseTransitions(),
	}
}

func specOf(r Record) *coordinationv1.LeaseSpec {
	holder := r.HolderIdentity
	return &coordinationv1.LeaseSpec{
		HolderIdentity:       &holder,
		LeaseDurationSeconds: &r.LeaseDurationSeconds,
		AcquireTime:          toMicroTime(r.AcquireTime),
		RenewTime:            toMicroTime(r.RenewTime),
		LeaseTransitions:     &r.LeaderTransitions,
	}
}

func microTime(t *metav1.MicroTime) time.Time {
	if t == nil {
		return time.Time{}
	}
	return time.Unix(t.GetSeconds(), int64(t.GetNanos())).UTC()
}

func toMicroTime(t time.Time) *metav1.MicroTime {
	if t.IsZero() {
		return nil
	}
	t = t.Truncate(time.Microsecond)
	return &metav1.MicroTime{Seconds: t.Unix(), Nanos: int32(t.Nanosecond())}
}
