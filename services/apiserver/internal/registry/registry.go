package registry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	mrand "math/rand/v2"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
	"podline.dev/pkg/telemetry"
	"podline.dev/proto/apis"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/admission"
	"podline.dev/services/apiserver/internal/storage"
	"podline.dev/services/apiserver/internal/validation"
)

// Registry serves one resource.
type Registry struct {
	Resource apis.Resource
	codec    storage.Codec
	store    *storage.Store
	strategy Strategy
	now      func() time.Time
	newUID   func() string
	cache    *Cacher
	// admission, when set, admits every write (see admit.go).
	admission *admission.Chain
	// alloc, when set, allocates around writes (see allocation.go).
	alloc Allocation
}

// New returns the registry of res over store. The kind's Go type must be
// linked in (import its generated package).
func New(res apis.Resource, store *storage.Store, opts ...Option) (*Registry, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(res.Message()))
	if err != nil {
		return nil, fmt.Errorf("registry: %s: %w", res.Message(), err)
	}
	r := &Registry{
		Resource: res,
		codec: storage.Codec{
			APIVersion: res.Group.GroupVersion(),
			Kind:       res.Kind,
			New:        func() object.Object { return mt.New().Interface().(object.Object) },
		},
		store:    store,
		strategy: Strategies[res.Kind],
		now:      time.Now,
		newUID:   newUUID,
	}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// Option configures a Registry.
type Option func(*Registry)

// WithClock sets the clock for timestamps.
func WithClock(now func() time.Time) Option { return func(r *Registry) { r.now = now } }

// New returns an empty object of the registry's kind.
func (r *Registry) New() object.Object { return r.codec.New() }

func (r *Registry) gr() apierrors.GroupResource {
	return apierrors.GroupResource{Group: r.Resource.Group.Name, Resource: r.Resource.Name}
}

func (r *Registry) gk() apierrors.GroupKind {
	return apierrors.GroupKind{Group: r.Resource.Group.Name, Kind: r.Resource.Kind}
}

// Key is the etcd key of an object.
func (r *Registry) Key(namespace, name string) string {
	if r.Resource.Namespaced {
		return r.Resource.EtcdPrefix() + namespace + "/" + name
	}
	return r.Resource.EtcdPrefix() + name
}

// prefix is the etcd prefix of a list: one namespace, or all.
func (r *Registry) prefix(namespace string) string {
	if r.Resource.Namespaced && namespace != "" {
		return r.Resource.EtcdPrefix() + namespace + "/"
	}
	return r.Resource.EtcdPrefix()
}

// toAPI maps storage errors to API errors naming this resource.
func (r *Registry) toAPI(err error, name string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, storage.ErrNotFound):
		return apierrors.NewNotFound(r.gr(), name)
	case errors.Is(err, storage.ErrExists):
		return apierrors.NewAlreadyExists(r.gr(), name)
	case errors.Is(err, storage.ErrConflict):
		return apierrors.NewOptimisticLock(r.gr(), name)
	case errors.Is(err, storage.ErrUnavailable):
		return apierrors.NewServiceUnavailable(fmt.Sprintf("etcd is unavailable: %v", err))
	case errors.Is(err, storage.ErrCompacted):
		return apierrors.NewResourceExpired(err.Error())
	}
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		return se
	}
	return apierrors.NewInternalError(err)
}

// checkNamespace reconciles the namespace in the path with the object's.
func (r *Registry) checkNamespace(md *metav1.ObjectMeta, namespace string) error {
	if !r.Resource.Namespaced {
		md.Namespace = ""
		return nil
	}
	if md.Namespace == "" {
		md.Namespace = namespace
	}
	if namespace != "" && md.Namespace != namespace {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if md.Namespace == "" {
		return apierrors.NewBadRequest("a namespace must be given for " + r.Resource.Name)
	}
	return nil
}

func (r *Registry) validate(ctx context.Context, obj object.Object, old object.Object) error {
	_, sp := tracer.Start(ctx, "validation")
	defer sp.End()
	errs := validation.ValidateObjectMeta(obj.GetMetadata(), r.Resource.Namespaced, r.Resource.Kind)
	if old != nil {
		errs = append(errs, validation.ValidateObjectMetaUpdate(obj.GetMetadata(), old.GetMetadata())...)
		errs = append(errs, validation.ValidateKindUpdate(obj, old)...)
	}
	errs = append(errs, validation.ValidateKind(obj)...)
	if r.strategy.Validate != nil {
		errs = append(errs, r.strategy.Validate(obj)...)
	}
	if len(errs) > 0 {
		name := obj.GetMetadata().GetName()
		sp.SetAttributes(attribute.Int("validation.errors", len(errs)))
		sp.SetStatus(codes.Error, errs.Error())
		return apierrors.NewInvalid(r.gk(), name, errs)
	}
	return nil
}

var tracer = otel.Tracer("podline.dev/apiserver/registry")

// Create stores a new object. obj is owned by the call.
func (r *Registry) Create(ctx context.Context, namespace string, obj object.Object, dryRun bool) (object.Object, error) {
	if obj.GetMetadata() == nil {
		setMetadata(obj, &metav1.ObjectMeta{})
	}
	md := obj.GetMetadata()
	if err := r.checkNamespace(md, namespace); err != nil {
		return nil, err
	}
	if md.ResourceVersion != "" {
		return nil, apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	generated := md.Name == "" && md.GenerateName != ""
	if generated {
		md.Name = md.GenerateName + randomSuffix()
	}
	storage.SetTypeMeta(obj, r.codec.APIVersion, r.codec.Kind)
	md.Uid = r.newUID()
	md.CreationTimestamp = &metav1.Time{Seconds: r.now().Unix()}
	md.DeletionTimestamp = nil
	md.DeletionGracePeriodSeconds = nil
	md.SelfLink = ""
	md.Generation = 0
	if hasField(obj, "spec") {
		md.Generation = 1
	}
	if hasField(obj, "status") && !r.strategy.KeepStatusOnCreate {
		clearField(obj, "status")
		if r.strategy.InitStatus != nil {
			r.strategy.InitStatus(obj)
		}
	}
	if r.strategy.PrepareForCreate != nil {
		r.strategy.PrepareForCreate(obj)
	}
	if len(md.ManagedFields) == 0 {
		if err := r.recordUpdate(ctx, nil, obj, ""); err != nil {
			return nil, err
		}
	}
	if err := r.admit(ctx, admission.Create, "", obj, nil, dryRun); err != nil {
		return nil, err
	}
	finish := finishNothing
	if r.alloc != nil {
		f, err := r.alloc.BeginCreate(ctx, obj, dryRun)
		if err != nil {
			return nil, err
		}
		finish = f
	}
	if dryRun {
		finish(ctx, false)
		return obj, nil
	}
	telemetry.Stamp(ctx, obj)
	out, err := r.store.Create(ctx, r.Key(md.Namespace, md.Name), r.codec, obj)
	if errors.Is(err, storage.ErrExists) && generated {
		// Kubernetes retries a clashing generated name once with a fresh suffix;
		// the caller sees AlreadyExists only if that clashes too.
		md.Name = md.GenerateName + randomSuffix()
		out, err = r.store.Create(ctx, r.Key(md.Namespace, md.Name), r.codec, obj)
	}
	finish(ctx, err == nil)
	return out, r.toAPI(err, md.Name)
}

// Get reads one object from etcd (a quorum read).
func (r *Registry) Get(ctx context.Context, namespace, name string) (object.Object, error) {
	obj, err := r.store.Get(ctx, r.Key(namespace, name), r.codec, 0)
	return obj, r.toAPI(err, name)
}

// preconditionRV checks a client's resourceVersion against the current object.
func (r *Registry) preconditionRV(rv string, cur object.Object) error {
	if rv != "" && rv != cur.GetMetadata().GetResourceVersion() {
		return apierrors.NewOptimisticLock(r.gr(), cur.GetMetadata().GetName())
	}
	return nil
}

// Update replaces an object's spec and metadata; its status is kept (the
// status subresource changes it). A resourceVersion in obj is a precondition.
func (r *Registry) Update(ctx context.Context, namespace, name string, obj object.Object, dryRun bool) (object.Object, error) {
	return r.update(ctx, namespace, name, obj, dryRun, false)
}

// UpdateStatus replaces an object's status only.
func (r *Registry) UpdateStatus(ctx context.Context, namespace, name string, obj object.Object, dryRun bool) (object.Object, error) {
	return r.update(ctx, namespace, name, obj, dryRun, true)
}

func (r *Registry) update(ctx context.Context, namespace, name string, obj object.Object, dryRun, status bool) (object.Object, error) {
	if obj.GetMetadata() == nil {
		setMetadata(obj, &metav1.ObjectMeta{})
	}
	md := obj.GetMetadata()
	if err := r.checkNamespace(md, namespace); err != nil {
		return nil, err
	}
	if md.Name == "" {
		md.Name = name
	}
	if md.Name != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", md.Name, name))
	}
	if _, err := storage.ParseResourceVersion(md.ResourceVersion); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	storage.SetTypeMeta(obj, r.codec.APIVersion, r.codec.Kind)
	opts := writeOpts{dryRun: dryRun, status: status}
	return r.guaranteedUpdate(ctx, md.Namespace, name, opts, func(cur object.Object) (object.Object, error) {
		if err := r.preconditionRV(md.ResourceVersion, cur); err != nil {
			return nil, err
		}
		return object.Copy(obj), nil
	})
}

// writeOpts says how guaranteedUpdate writes: dryRun, the status
// subresource, and the subresource and operation managedFields record.
type writeOpts struct {
	dryRun, status bool
	// subresource is "", "status" or "scale", as managedFields name it.
	subresource string
	// applied is true when the new object's managedFields were already
	// computed (server-side apply).
	applied bool
}

// guaranteedUpdate writes the object newObj derives from the current one,
// retrying on a concurrent write: server-set fields carried over, managed
// fields recorded, validated, stamped with the trace.
func (r *Registry) guaranteedUpdate(ctx context.Context, namespace, name string, opts writeOpts, newObj func(cur object.Object) (object.Object, error)) (object.Object, error) {
	var result object.Object
	// finish settles the allocations of the attempt that was last tried;
	// a retried attempt first gives back what the one before it took.
	finish, removed := finishNothing, false
	fn := func(cur object.Object) (object.Object, bool, error) {
		finish(ctx, false)
		finish, removed = finishNothing, false
		next, err := newObj(cur)
		if err != nil {
			return nil, false, err
		}
		r.carryOver(next, cur, opts.status)
		if !opts.applied {
			if err := r.recordUpdate(ctx, cur, next, subresourceOf(opts)); err != nil {
				return nil, false, err
			}
		}
		if err := r.admit(ctx, admission.Update, subresourceOf(opts), next, cur, opts.dryRun); err != nil {
			return nil, false, err
		}
		telemetry.Stamp(ctx, next)
		nmd := next.GetMetadata()
		remove := nmd.DeletionTimestamp != nil && len(nmd.Finalizers) == 0 && nmd.GetDeletionGracePeriodSeconds() == 0 && !r.holdsDeletion(next)
		if r.alloc != nil && !remove && subresourceOf(opts) == "" {
			f, err := r.alloc.BeginUpdate(ctx, next, cur, opts.dryRun)
			if err != nil {
				return nil, false, err
			}
			finish = f
		}
		if opts.dryRun {
			result = next
			return nil, false, errDryRun
		}
		removed = remove
		return next, remove, nil
	}
	out, err := r.store.GuaranteedUpdate(ctx, r.Key(namespace, name), r.codec, fn)
	finish(ctx, err == nil)
	if errors.Is(err, errDryRun) {
		return result, nil
	}
	if err == nil && removed && r.alloc != nil {
		r.alloc.Release(ctx, out)
	}
	return out, r.toAPI(err, name)
}

var errDryRun = errors.New("dry run")

// holdsDeletion reports whether the kind's strategy keeps a deleted obj.
func (r *Registry) holdsDeletion(obj object.Object) bool {
	return r.strategy.HoldsDeletion != nil && r.strategy.HoldsDeletion(obj)
}

// carryOver copies from cur what the caller may not change: server-set
// metadata always; status on a main-resource update; spec and most
// metadata on a status update; and bumps generation when spec changed.
func (r *Registry) carryOver(next, cur object.Object, status bool) {
	nmd, cmd := next.GetMetadata(), cur.GetMetadata()
	nmd.Uid = cmd.Uid
	nmd.CreationTimestamp = cmd.CreationTimestamp
	nmd.DeletionTimestamp = cmd.DeletionTimestamp
	nmd.DeletionGracePeriodSeconds = cmd.DeletionGracePeriodSeconds
	nmd.Generation = cmd.Generation
	nmd.SelfLink = ""
	if len(nmd.ManagedFields) == 0 {
		nmd.ManagedFields = cmd.ManagedFields
	}
	if status {
		// As Kubernetes' status strategies do, a status write cannot change
		// labels, so a kubelet's status report made from a stale copy does
		// not undo an admin's `kubectl label node`. Annotations still go
		// through: podline's controllers record theirs (the deployment's
		// revision, the write's traceparent) with their status writes.
		copyField(next, cur, "spec")
		nmd.OwnerReferences = cmd.OwnerReferences
		nmd.Finalizers = cmd.Finalizers
		nmd.Labels = maps.Clone(cmd.Labels)
		return
	}
	if r.Resource.Status {
		copyField(next, cur, "status")
	}
	if r.strategy.PrepareForUpdate != nil {
		r.strategy.PrepareForUpdate(next, cur)
	}
	if hasField(next, "spec") && !sameField(next, cur, "spec") {
		nmd.Generation = cmd.Generation + 1
	}
}

// Delete removes an object, or marks it for deletion when finalizers or a
// grace period hold it; it returns the object's last state.
func (r *Registry) Delete(ctx context.Context, namespace, name string, opts *metav1.DeleteOptions, dryRun bool) (object.Object, error) {
	if opts == nil {
		opts = &metav1.DeleteOptions{}
	}
	var result object.Object
	fn := func(cur object.Object) (object.Object, bool, error) {
		cmd := cur.GetMetadata()
		if pre := opts.GetPreconditions(); pre != nil {
			if pre.Uid != nil && *pre.Uid != cmd.GetUid() {
				return nil, false, apierrors.NewConflict(r.gr(), name,
					fmt.Sprintf("Precondition failed: UID in precondition: %s, UID in object meta: %s", *pre.Uid, cmd.GetUid()))
			}
			if pre.ResourceVersion != nil {
				if err := r.preconditionRV(*pre.ResourceVersion, cur); err != nil {
					return nil, false, err
				}
			}
		}
		if err := r.admitDelete(ctx, cur, dryRun); err != nil {
			return nil, false, err
		}
		next := object.Copy(cur)
		md := next.GetMetadata()
		md.Finalizers = withPropagationFinalizer(md.Finalizers, opts)
		grace := int64(0)
		if r.strategy.GracePeriod != nil {
			grace = r.strategy.GracePeriod(cur, opts.GracePeriodSeconds)
		}
		remove := len(md.Finalizers) == 0 && grace == 0 && !r.holdsDeletion(next)
		if !remove {
			if r.strategy.MarkDeleting != nil {
				r.strategy.MarkDeleting(next)
			}
			now := r.now()
			if md.DeletionTimestamp == nil || grace < md.GetDeletionGracePeriodSeconds() {
				md.DeletionTimestamp = &metav1.Time{Seconds: now.Add(time.Duration(grace) * time.Second).Unix()}
				md.DeletionGracePeriodSeconds = proto.Int64(grace)
			}
			if proto.Equal(next, cur) {
				// Already marked the same way: nothing to write.
				result = cur
				return nil, false, errUnchanged
			}
		}
		if dryRun {
			result = next
			return nil, false, errDryRun
		}
		if remove {
			return nil, true, nil
		}
		return next, false, nil
	}
	var removed bool
	fn2 := func(cur object.Object) (object.Object, bool, error) {
		next, remove, err := fn(cur)
		removed = remove
		return next, remove, err
	}
	out, err := r.store.GuaranteedUpdate(ctx, r.Key(namespace, name), r.codec, fn2)
	if errors.Is(err, errDryRun) || errors.Is(err, errUnchanged) {
		return result, nil
	}
	if err == nil && removed && r.alloc != nil {
		r.alloc.Release(ctx, out)
	}
	return out, r.toAPI(err, name)
}

var errUnchanged = errors.New("unchanged")

// Finalizers that carry a deletion's propagation policy, as in Kubernetes.
const (
	FinalizerOrphan     = "orphan"
	FinalizerForeground = "foregroundDeletion"
)

func withPropagationFinalizer(finalizers []string, opts *metav1.DeleteOptions) []string {
	policy := opts.GetPropagationPolicy()
	if policy == "" && opts.OrphanDependents != nil {
		if *opts.OrphanDependents {
			policy = "Orphan"
		} else {
			policy = "Background"
		}
	}
	var add string
	switch policy {
	case "Orphan":
		add = FinalizerOrphan
	case "Foreground":
		add = FinalizerForeground
	default:
		return finalizers
	}
	for _, f := range finalizers {
		if f == add {
			return finalizers
		}
	}
	return append(append([]string(nil), finalizers...), add)
}

func setMetadata(obj object.Object, md *metav1.ObjectMeta) {
	m := obj.ProtoReflect()
	m.Set(fieldOf(obj, "metadata"), protoreflect.ValueOfMessage(md.ProtoReflect()))
}

// randomSuffix is the 5 characters Kubernetes appends to a generateName.
func randomSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	var b [5]byte
	for i := range b {
		b[i] = alphabet[mrand.IntN(len(alphabet))]
	}
	return string(b[:])
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	hex.Encode(s[9:13], b[4:6])
	hex.Encode(s[14:18], b[6:8])
	hex.Encode(s[19:23], b[8:10])
	hex.Encode(s[24:36], b[10:16])
	s[8], s[13], s[18], s[23] = '-', '-', '-', '-'
	return string(s[:])
}
