package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"sigs.k8s.io/yaml"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/k8sjson"
	"podline.dev/pkg/object"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/admission"
	"podline.dev/services/apiserver/internal/patch"
)

// Patch types: the Content-Type of a REST PATCH.
const (
	MergePatch     = "application/merge-patch+json"
	JSONPatch      = "application/json-patch+json"
	StrategicPatch = "application/strategic-merge-patch+json"
	ApplyPatch     = "application/apply-patch+yaml"
)

// PatchTypes lists the patch types the server accepts, as its 415 says.
var PatchTypes = []string{JSONPatch, MergePatch, StrategicPatch, ApplyPatch}

// PatchOptions is one PATCH request.
type PatchOptions struct {
	Type string
	Data []byte
	// Subresource is "" or "status".
	Subresource string
	DryRun      bool
	// Force takes conflicting fields from their managers (apply only).
	Force      bool
	Validation k8sjson.FieldValidation
	// FieldManager is the fieldManager parameter as sent; apply requires it
	// (other writes take their manager from the context).
	FieldManager string
}

// patcher applies one parsed patch to an object's JSON values.
type patcher func(cur map[string]any, managed patch.Managed) (map[string]any, patch.Managed, error)

// Patch applies a patch to the current object and writes the result as an
// update would (validated, status or spec kept by subresource), with the
// object's resourceVersion as precondition, retrying on a concurrent write.
// Server-side apply of an object that does not exist creates it.
func (r *Registry) Patch(ctx context.Context, namespace, name string, opts PatchOptions) (object.Object, error) {
	if opts.Subresource == "status" && !r.Resource.Status {
		return nil, apierrors.NewNotFound(r.gr(), name)
	}
	apply, err := r.patcher(name, opts)
	if err != nil {
		return nil, err
	}
	wo := writeOpts{dryRun: opts.DryRun, status: opts.Subresource == "status", subresource: opts.Subresource, applied: opts.Type == ApplyPatch}
	var warnings []string
	out, err := r.guaranteedUpdate(ctx, namespace, name, wo, func(cur object.Object) (object.Object, error) {
		next, w, err := r.patchObject(cur, namespace, name, opts, apply)
		warnings = w // of the attempt that is written, not of retries
		return next, err
	})
	if opts.Type == ApplyPatch && apierrors.IsNotFound(err) {
		return r.applyCreate(ctx, namespace, name, opts, apply)
	}
	if err == nil {
		warn(ctx, warnings)
	}
	return out, err
}

// warn sends decode warnings back as admission's are sent: "warning" gRPC
// response headers, which the REST layer turns into Warning headers.
func warn(ctx context.Context, warnings []string) {
	if len(warnings) == 0 {
		return
	}
	md := metadata.MD{}
	for _, w := range warnings {
		md.Append(admission.WarningMetadataKey, w)
	}
	_ = grpc.SetHeader(ctx, md)
}

// patchObject computes the patched object from cur.
func (r *Registry) patchObject(cur object.Object, namespace, name string, opts PatchOptions, apply patcher) (object.Object, []string, error) {
	// managedFields stay in: a patch may reset them, as in Kubernetes
	// ([{"op":"replace","path":"/metadata/managedFields","value":[{}]}]).
	values, err := toAllValues(cur)
	if err != nil {
		return nil, nil, err
	}
	managed, err := decodeManaged(cur.GetMetadata().GetManagedFields())
	if err != nil {
		return nil, nil, err
	}
	patched, managed, err := apply(values, managed)
	if err != nil {
		return nil, nil, err
	}
	next, warnings, err := r.decodePatched(patched, opts.Validation)
	if err != nil {
		return nil, nil, err
	}
	md := next.GetMetadata()
	if opts.Type == ApplyPatch {
		md.ManagedFields = encodeManaged(managed)
	}
	if md.GetName() != name {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", md.GetName(), name))
	}
	if r.Resource.Namespaced && md.GetNamespace() != namespace {
		return nil, nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if err := r.preconditionRV(md.GetResourceVersion(), cur); err != nil {
		return nil, nil, err
	}
	return next, warnings, nil
}

// applyCreate creates the object a server-side apply describes.
func (r *Registry) applyCreate(ctx context.Context, namespace, name string, opts PatchOptions, apply patcher) (object.Object, error) {
	patched, managed, err := apply(nil, nil)
	if err != nil {
		return nil, err
	}
	obj, warnings, err := r.decodePatched(patched, opts.Validation)
	if err != nil {
		return nil, err
	}
	defer warn(ctx, warnings)
	md := obj.GetMetadata()
	if md == nil {
		setMetadata(obj, &metav1.ObjectMeta{})
		md = obj.GetMetadata()
	}
	if md.Name == "" {
		md.Name = name
	}
	md.ManagedFields = encodeManaged(managed)
	out, err := r.Create(ctx, namespace, obj, opts.DryRun)
	if err == nil {
		_ = grpc.SetHeader(ctx, metadata.Pairs(CreatedMetadataKey, "true"))
	}
	return out, err
}

// CreatedMetadataKey is the gRPC response header that says a PATCH (a
// server-side apply) created its object; REST answers it 201, as Kubernetes does.
const CreatedMetadataKey = "podline-created"

// decodePatched reads the patched object in the request's fieldValidation
// mode: unknown fields are an error (Strict), a warning (Warn, the
// default) or dropped (Ignore).
func (r *Registry) decodePatched(v map[string]any, validation k8sjson.FieldValidation) (object.Object, []string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	obj := r.New()
	warnings, err := k8sjson.Unmarshal(b, obj, validation)
	if err != nil {
		return nil, nil, r.invalidPatch(err)
	}
	return obj, warnings, nil
}

// invalidPatch is the 422 of a patch whose result is not a valid object.
func (r *Registry) invalidPatch(err error) error {
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		return se
	}
	if errors.Is(err, patch.ErrBadPatch) {
		return apierrors.NewBadRequest(err.Error())
	}
	se = apierrors.NewBadRequest(err.Error())
	var strict *k8sjson.StrictError
	if errors.As(err, &strict) {
		// Unknown or duplicate fields under fieldValidation=Strict: 400, as
		// for a request body.
		se = apierrors.NewBadRequest(err.Error())
		se.ErrStatus.Details = fieldCauses(err)
		return se
	}
	se.ErrStatus.Code = 422
	se.ErrStatus.Reason = apierrors.ReasonInvalid
	if d := fieldCauses(err); d != nil {
		d.Group, d.Kind = r.Resource.Group.Name, r.Resource.Kind
		se.ErrStatus.Details = d
	}
	return se
}

// fieldCauses names each field the decoder refused.
func fieldCauses(err error) *metav1.StatusDetails {
	fes := k8sjson.FieldErrors(err)
	if len(fes) == 0 {
		return nil
	}
	d := &metav1.StatusDetails{}
	for _, fe := range fes {
		d.Causes = append(d.Causes, &metav1.StatusCause{Reason: string(fe.Reason), Message: fe.Message, Field: fe.Path})
	}
	return d
}

// patcher parses the patch once, before the object is read: a malformed
// patch is a 400 that touches nothing.
func (r *Registry) patcher(name string, opts PatchOptions) (patcher, error) {
	bad := func(err error) error { return apierrors.NewBadRequest(err.Error()) }
	switch opts.Type {
	case MergePatch, StrategicPatch:
		p, err := patch.Decode(opts.Data)
		if err != nil {
			return nil, bad(err)
		}
		pm, ok := p.(map[string]any)
		if opts.Type == StrategicPatch && !ok {
			return nil, apierrors.NewBadRequest("the strategic merge patch is not a JSON object")
		}
		return func(cur map[string]any, m patch.Managed) (map[string]any, patch.Managed, error) {
			if opts.Type == MergePatch {
				out, ok := patch.MergePatch(cur, p).(map[string]any)
				if !ok {
					return nil, nil, r.invalidPatch(errors.New("the patch replaces the object with a value that is not an object"))
				}
				return out, m, nil
			}
			out, err := patch.StrategicMerge(cur, pm)
			return out, m, r.patchFailed(err)
		}, nil
	case JSONPatch:
		ops, err := patch.ParseJSONPatch(opts.Data)
		if err != nil {
			return nil, bad(err)
		}
		return func(cur map[string]any, m patch.Managed) (map[string]any, patch.Managed, error) {
			out, err := patch.JSONPatch(cur, ops)
			if err != nil {
				return nil, nil, r.patchFailed(err)
			}
			obj, ok := out.(map[string]any)
			if !ok {
				return nil, nil, r.invalidPatch(errors.New("the patch replaces the object with a value that is not an object"))
			}
			return obj, m, nil
		}, nil
	case ApplyPatch:
		return r.applyPatcher(name, opts)
	}
	return nil, apierrors.NewUnsupportedMediaType(opts.Type)
}

// patchFailed maps a patch that does not apply: malformed is 400, the rest 422.
func (r *Registry) patchFailed(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, patch.ErrBadPatch):
		return apierrors.NewBadRequest(err.Error())
	}
	return r.invalidPatch(err)
}

// applyPatcher reads a server-side apply configuration (YAML or JSON).
func (r *Registry) applyPatcher(name string, opts PatchOptions) (patcher, error) {
	manager := opts.FieldManager
	if manager == "" {
		return nil, apierrors.NewBadRequest("PATCH, application/apply-patch+yaml requests must specify a fieldManager")
	}
	js, err := yaml.YAMLToJSON(opts.Data)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	config, err := patch.DecodeObject(js)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	apiVersion, _ := config["apiVersion"].(string)
	kind, _ := config["kind"].(string)
	if apiVersion == "" || kind == "" {
		return nil, apierrors.NewBadRequest("apiVersion and kind must be set in an apply configuration")
	}
	if apiVersion != r.codec.APIVersion || kind != r.codec.Kind {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the apply configuration is a %s %s, not a %s %s", apiVersion, kind, r.codec.APIVersion, r.codec.Kind))
	}
	if md, _ := config["metadata"].(map[string]any); md != nil {
		if _, ok := md["managedFields"]; ok {
			return nil, apierrors.NewBadRequest("metadata.managedFields must be nil")
		}
		if n, _ := md["name"].(string); n != "" && n != name {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, name))
		}
	}
	skip := r.untracked(opts.Subresource)
	return func(cur map[string]any, m patch.Managed) (map[string]any, patch.Managed, error) {
		out, managed, err := patch.Apply(cur, config, m, manager, r.codec.APIVersion, opts.Subresource, opts.Force, r.now().Unix(), skip)
		var ce *patch.ConflictError
		if errors.As(err, &ce) {
			return nil, nil, r.applyConflict(ce)
		}
		return out, managed, r.patchFailed(err)
	}, nil
}

// applyConflict is Kubernetes' 409 for an apply that would take fields
// from other managers: one cause per field, of type FieldManagerConflict.
func (r *Registry) applyConflict(ce *patch.ConflictError) error {
	se := apierrors.NewConflict(r.gr(), "", ce.Error())
	se.ErrStatus.Message = ce.Error()
	d := &metav1.StatusDetails{}
	for _, c := range ce.Conflicts {
		d.Causes = append(d.Causes, &metav1.StatusCause{Reason: "FieldManagerConflict", Message: c.Describe(), Field: patch.PathString(c.Path)})
	}
	se.ErrStatus.Details = d
	return se
}

// IsPatchType tells a supported patch Content-Type (parameters ignored).
func IsPatchType(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.TrimSpace(strings.ToLower(mt))
	for _, t := range PatchTypes {
		if mt == t {
			return true
		}
	}
	return false
}
