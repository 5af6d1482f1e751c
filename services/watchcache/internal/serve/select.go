package serve

import (
	"fmt"
	"strconv"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/fields"
	"podline.dev/pkg/labels"
	"podline.dev/pkg/watchcache"
	"podline.dev/proto/apis"
	metav1 "podline.dev/proto/meta/v1"
)

// filter reads a request's namespace and selectors as the apiserver does.
func filter(res apis.Resource, req *metav1.ListRequest) (watchcache.Filter, error) {
	f := watchcache.Filter{}
	if res.Namespaced {
		f.Namespace = req.GetNamespace()
	}
	if ls := req.GetLabelSelector(); ls != "" {
		sel, err := labels.Parse(ls)
		if err != nil {
			return f, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
		}
		f.Label = func(l map[string]string) bool { return sel.Matches(l) }
	}
	fs, err := fields.Parse(req.GetFieldSelector(), res.Kind)
	if err != nil {
		return f, apierrors.NewBadRequest(err.Error())
	}
	if len(fs) > 0 {
		f.Field = fs.Matches
		f.Trigger, f.Triggered = fs.TriggerValue(res.Kind)
	}
	return f, nil
}

// resourceVersion parses a request's resourceVersion; "" is 0.
func resourceVersion(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n < 0 {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q", rv))
	}
	return n, nil
}
