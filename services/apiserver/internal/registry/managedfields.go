package registry

import (
	"context"
	"strings"
	"sync"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/k8sjson"
	"podline.dev/pkg/object"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/patch"
)

type fieldManagerKey struct{}

// WithFieldManager names the manager of a write, as the fieldManager
// request parameter (or the client's user agent) does in Kubernetes. A
// write with no manager in its context (the apiserver's own) records none.
func WithFieldManager(ctx context.Context, manager string) context.Context {
	return context.WithValue(ctx, fieldManagerKey{}, manager)
}

func fieldManager(ctx context.Context) string {
	m, _ := ctx.Value(fieldManagerKey{}).(string)
	return m
}

// DefaultFieldManager is Kubernetes' default manager name: the user
// agent up to its first "/" ("kubectl", "kube-controller-manager").
func DefaultFieldManager(userAgent string) string {
	name, _, _ := strings.Cut(userAgent, "/")
	if name == "" {
		return "unknown"
	}
	return name
}

// serverFields are the metadata fields the server sets; no manager owns them.
var serverFields = map[string]bool{
	"f:name": true, "f:namespace": true, "f:generateName": true, "f:uid": true, "f:resourceVersion": true,
	"f:generation": true, "f:creationTimestamp": true, "f:deletionTimestamp": true,
	"f:deletionGracePeriodSeconds": true, "f:managedFields": true, "f:selfLink": true,
}

// untracked says which fields a write through subresource does not own:
// apiVersion, kind and server-set metadata always; status on the main
// resource of a kind with a status subresource; all but status on it.
func (r *Registry) untracked(subresource string) func(path []string) bool {
	return func(p []string) bool {
		switch {
		case p[0] == "f:apiVersion" || p[0] == "f:kind":
			return true
		case len(p) == 2 && p[0] == "f:metadata":
			return serverFields[p[1]]
		case len(p) != 1:
			return false
		case subresource == "status":
			return p[0] != "f:status"
		case subresource == "scale":
			return p[0] != "f:spec"
		}
		return p[0] == "f:status" && r.Resource.Status
	}
}

// withoutManagedFields runs f with obj's managedFields set aside: no
// manager owns them, and they are the largest part of many objects.
func withoutManagedFields[T any](obj object.Object, f func() (T, error)) (T, error) {
	if md := obj.GetMetadata(); md != nil && len(md.ManagedFields) > 0 {
		saved := md.ManagedFields
		md.ManagedFields = nil
		defer func() { md.ManagedFields = saved }()
	}
	return f()
}

// toValues decodes an object into JSON values, without its managedFields.
func toValues(obj object.Object) (map[string]any, error) {
	return withoutManagedFields(obj, func() (map[string]any, error) { return toAllValues(obj) })
}

// toAllValues decodes an object into JSON values, managedFields included.
func toAllValues(obj object.Object) (map[string]any, error) {
	b, err := k8sjson.Marshal(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	m, err := patch.DecodeObjectText(b)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return m, nil
}

// membersOf returns the members of an object's fields but its
// managedFields, read from its JSON without decoding it into values.
func membersOf(obj object.Object, skip func([]string) bool) (patch.Members, error) {
	return withoutManagedFields(obj, func() (patch.Members, error) {
		buf := jsonBuffers.Get().(*[]byte)
		defer jsonBuffers.Put(buf)
		b, err := k8sjson.MarshalAppend((*buf)[:0], obj)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if cap(b) <= 64<<10 {
			*buf = b
		}
		members, err := patch.MembersOfJSON(b, skip)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		return members, nil
	})
}

var jsonBuffers = sync.Pool{New: func() any { return new([]byte) }}

// recordUpdate gives the fields a write changed to the context's field
// manager in next's managedFields (operation Update). On a create (cur
// nil) every field of next changed.
func (r *Registry) recordUpdate(ctx context.Context, cur, next object.Object, subresource string) error {
	manager := fieldManager(ctx)
	if manager == "" {
		return nil
	}
	md := next.GetMetadata()
	managed, err := decodeManaged(md.GetManagedFields())
	if err != nil {
		return err
	}
	skip := r.untracked(subresource)
	now := r.now().Unix()
	if cur == nil {
		members, err := membersOf(next, skip)
		if err != nil {
			return err
		}
		if len(managed) == 0 {
			// The writer's entry is the only one: its fieldsV1 is written
			// from the members without making them a set.
			md.ManagedFields = nil
			if len(members) > 0 {
				e := &patch.Entry{Manager: manager, Operation: patch.OpUpdate, APIVersion: r.codec.APIVersion, Subresource: subresource, Time: now}
				md.ManagedFields = []*metav1.ManagedFieldsEntry{encodeEntry(e, members.MarshalFieldsV1())}
			}
			return nil
		}
		managed = managed.Record(members.Set(), nil, manager, r.codec.APIVersion, subresource, now)
	} else {
		prev, err := toValues(cur)
		if err != nil {
			return err
		}
		nv, err := toValues(next)
		if err != nil {
			return err
		}
		managed = managed.Update(prev, nv, manager, r.codec.APIVersion, subresource, now, skip)
	}
	md.ManagedFields = encodeManaged(managed)
	return nil
}

func decodeManaged(entries []*metav1.ManagedFieldsEntry) (patch.Managed, error) {
	out := make(patch.Managed, 0, len(entries))
	for _, e := range entries {
		set, err := patch.ParseFieldsV1(e.GetFieldsV1())
		if err != nil {
			return nil, apierrors.NewBadRequest("metadata.managedFields: " + err.Error())
		}
		out = append(out, &patch.Entry{Manager: e.GetManager(), Operation: e.GetOperation(), APIVersion: e.GetApiVersion(),
			Subresource: e.GetSubresource(), Time: e.GetTime().GetSeconds(), Set: set})
	}
	return out, nil
}

func encodeManaged(m patch.Managed) []*metav1.ManagedFieldsEntry {
	out := make([]*metav1.ManagedFieldsEntry, 0, len(m))
	for _, e := range m {
		out = append(out, encodeEntry(e, e.Set.MarshalFieldsV1()))
	}
	return out
}

func encodeEntry(e *patch.Entry, fieldsV1 string) *metav1.ManagedFieldsEntry {
	return &metav1.ManagedFieldsEntry{Manager: e.Manager, Operation: e.Operation, ApiVersion: e.APIVersion,
		Time: &metav1.Time{Seconds: e.Time}, FieldsType: "FieldsV1", FieldsV1: fieldsV1, Subresource: e.Subresource}
}
