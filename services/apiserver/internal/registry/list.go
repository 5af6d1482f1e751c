package registry

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/fields"
	"podline.dev/pkg/labels"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	"podline.dev/pkg/watchcache"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/storage"
)

// selection is a list or watch request's namespace and selectors.
type selection struct {
	kind      string
	namespace string
	labels    labels.Selector
	fields    fields.Selector
}

func (r *Registry) selection(opts *metav1.ListRequest) (selection, error) {
	s := selection{kind: r.Resource.Kind}
	if r.Resource.Namespaced {
		s.namespace = opts.GetNamespace()
	}
	if ls := opts.GetLabelSelector(); ls != "" {
		sel, err := labels.Parse(ls)
		if err != nil {
			return s, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
		}
		s.labels = sel
	}
	fs, err := fields.Parse(opts.GetFieldSelector(), r.Resource.Kind)
	if err != nil {
		return s, apierrors.NewBadRequest(err.Error())
	}
	s.fields = fs
	return s, nil
}

func (s selection) matches(obj object.Object) bool {
	md := obj.GetMetadata()
	if s.namespace != "" && md.GetNamespace() != s.namespace {
		return false
	}
	if s.labels != nil && !s.labels.Matches(md.GetLabels()) {
		return false
	}
	return s.fields.Matches(obj)
}

func (s selection) filter() watchcache.Filter {
	f := watchcache.Filter{Namespace: s.namespace}
	if sel := s.labels; sel != nil {
		f.Label = func(l map[string]string) bool { return sel.Matches(l) }
	}
	if len(s.fields) > 0 {
		f.Field = s.fields.Matches
		f.Trigger, f.Triggered = s.fields.TriggerValue(s.kind)
	}
	return f
}

// GetCached returns the object from the watch cache, shared and read-only,
// when the registry has a cache and it holds the object; ok is false
// otherwise (no cache, or not there yet), and the caller reads etcd.
func (r *Registry) GetCached(namespace, name string) (obj object.Object, ok bool) {
	if r.cache == nil {
		return nil, false
	}
	if !r.Resource.Namespaced {
		namespace = ""
	}
	obj, _, ok = r.cache.cache.Get(object.KeyOf(namespace, name))
	return obj, ok
}

// continueToken is the opaque continue value of a paged list, shaped as Kubernetes'.
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

func encodeContinue(rev int64, key, prefix string) string {
	b, _ := json.Marshal(continueToken{APIVersion: "meta.k8s.io/v1", ResourceVersion: rev, StartKey: strings.TrimPrefix(key, prefix)})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(s, prefix string) (int64, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, "", fmt.Errorf("continue key is not valid: %v", err)
	}
	var t continueToken
	if err := json.Unmarshal(b, &t); err != nil || t.APIVersion != "meta.k8s.io/v1" || t.ResourceVersion <= 0 {
		return 0, "", errors.New("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	}
	if strings.Contains(t.StartKey, "..") || strings.HasPrefix(t.StartKey, "/") {
		return 0, "", errors.New("continue key is not valid: key is not in the list's range")
	}
	return t.ResourceVersion, prefix + t.StartKey, nil
}

const continueExpiredMsg = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue value from the response to get a consistent list result."

// List returns the objects selected by opts and the list's metadata.
// resourceVersion "0" (without paging) is served from the watch cache;
// anything else reads etcd: the latest state, an exact revision when
// resourceVersionMatch is Exact, or the revision of a continue token.
func (r *Registry) List(ctx context.Context, opts *metav1.ListRequest) ([]object.Object, *metav1.ListMeta, error) {
	sel, err := r.selection(opts)
	if err != nil {
		return nil, nil, err
	}
	rv, err := storage.ParseResourceVersion(opts.GetResourceVersion())
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	if r.cache != nil && opts.GetResourceVersion() == "0" && opts.GetLimit() == 0 && opts.GetContinue() == "" {
		items, rev := r.cache.cache.List(sel.filter())
		return items, &metav1.ListMeta{ResourceVersion: strconv.FormatInt(rev, 10)}, nil
	}
	prefix := r.prefix(sel.namespace)
	var start string
	readRev := int64(0)
	if opts.GetResourceVersionMatch() == "Exact" {
		readRev = rv
	}
	if c := opts.GetContinue(); c != "" {
		readRev, start, err = decodeContinue(c, prefix)
		if err != nil {
			return nil, nil, apierrors.NewBadRequest(err.Error())
		}
	}
	res, err := r.store.List(ctx, prefix, r.codec, readRev, start, opts.GetLimit(), sel.matches)
	if errors.Is(err, storage.ErrCompacted) {
		if opts.GetContinue() != "" {
			return nil, nil, apierrors.NewResourceExpired(continueExpiredMsg)
		}
		return nil, nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d", readRev))
	}
	if err != nil {
		return nil, nil, r.toAPI(err, "")
	}
	lm := &metav1.ListMeta{ResourceVersion: strconv.FormatInt(res.Revision, 10)}
	if res.Next != "" {
		lm.Continue = encodeContinue(res.Revision, res.Next, prefix)
		if sel.labels == nil && len(sel.fields) == 0 {
			lm.RemainingItemCount = &res.Remaining
		}
	}
	return res.Items, lm, nil
}

// Watch streams the changes selected by opts from the watch cache, starting
// after opts.resourceVersion ("" or "0": the current state as ADDED events first).
func (r *Registry) Watch(ctx context.Context, opts *metav1.ListRequest) (watch.Interface, error) {
	if r.cache == nil {
		return nil, apierrors.NewMethodNotSupported(r.gr(), "watch")
	}
	sel, err := r.selection(opts)
	if err != nil {
		return nil, err
	}
	rv, err := storage.ParseResourceVersion(opts.GetResourceVersion())
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if t := opts.GetTimeoutSeconds(); opts.TimeoutSeconds != nil && t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(t)*time.Second)
		go func() { <-ctx.Done(); cancel() }()
	}
	w, err := r.cache.cache.Watch(ctx, rv, sel.filter(), opts.GetAllowWatchBookmarks())
	if err != nil {
		return nil, r.toAPI(err, "")
	}
	return w, nil
}
