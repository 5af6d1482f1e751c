package fields

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"podline.dev/pkg/object"
)

// selectableFields lists, per kind, the fields a field selector may name
// beyond metadata.name and metadata.namespace (Kubernetes' per-kind sets).
var selectableFields = map[string][]string{
	"Pod": {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
		"spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"},
	"Event": {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
		"involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
		"reason", "reportingComponent", "source", "type"},
	"Secret":     {"type"},
	"Namespace":  {"status.phase"},
	"Node":       {"spec.unschedulable"},
	"ReplicaSet": {"status.replicas"},
}

type requirement struct {
	path  string
	steps []string // path split at its dots, once, at Parse
	value string
	equal bool
}

// Selector is a parsed field selector: every requirement must hold. The
// nil Selector matches everything.
type Selector []requirement

// Parse reads "a=b,c!=d" (also "a==b") and checks each field is selectable for kind.
func Parse(s, kind string) (Selector, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	allowed := map[string]bool{"metadata.name": true, "metadata.namespace": true}
	for _, f := range selectableFields[kind] {
		allowed[f] = true
	}
	var sel Selector
	for _, part := range strings.Split(s, ",") {
		var req requirement
		switch {
		case strings.Contains(part, "!="):
			kv := strings.SplitN(part, "!=", 2)
			req = requirement{path: kv[0], value: kv[1]}
		case strings.Contains(part, "=="):
			kv := strings.SplitN(part, "==", 2)
			req = requirement{path: kv[0], value: kv[1], equal: true}
		case strings.Contains(part, "="):
			kv := strings.SplitN(part, "=", 2)
			req = requirement{path: kv[0], value: kv[1], equal: true}
		default:
			return nil, fmt.Errorf("invalid selector: '%s'; can't understand '%s'", s, part)
		}
		req.path = strings.TrimSpace(req.path)
		req.value = strings.TrimSpace(req.value)
		if !allowed[req.path] {
			return nil, fmt.Errorf("field label not supported: %s", req.path)
		}
		req.steps = strings.Split(req.path, ".")
		sel = append(sel, req)
	}
	return sel, nil
}

// Matches evaluates the selector against obj.
func (sel Selector) Matches(obj object.Object) bool {
	for _, req := range sel {
		if (fieldValue(obj, req.steps) == req.value) != req.equal {
			return false
		}
	}
	return true
}

// fieldValue reads a scalar at a JSON path (["spec", "nodeName"]) as a
// string; unset is "".
func fieldValue(obj object.Object, steps []string) string {
	m := obj.ProtoReflect()
	for i, step := range steps {
		fd := m.Descriptor().Fields().ByJSONName(step)
		if fd == nil {
			return ""
		}
		if i == len(steps)-1 {
			return scalarString(m.Get(fd), fd)
		}
		if fd.Kind() != protoreflect.MessageKind || fd.IsList() || fd.IsMap() || !m.Has(fd) {
			return ""
		}
		m = m.Get(fd).Message()
	}
	return ""
}

func scalarString(v protoreflect.Value, fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return v.String()
	case protoreflect.BoolKind:
		return strconv.FormatBool(v.Bool())
	case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return strconv.FormatInt(v.Int(), 10)
	case protoreflect.MessageKind:
		// "source" on Events selects the component.
		if fd.Message().Fields().ByName("component") != nil {
			return v.Message().Get(fd.Message().Fields().ByName("component")).String()
		}
	}
	return ""
}

// triggerFields names, per kind, the field watchers are indexed by in the
// watch caches, as kube-apiserver indexes Pods by spec.nodeName: every
// kubelet watches its node's pods.
var triggerFields = map[string]string{"Pod": "spec.nodeName"}

// Trigger returns the function that reads kind's trigger field from an
// object, for watchcache.WithTrigger, or nil when kind has none.
func Trigger(kind string) func(object.Object) string {
	path, ok := triggerFields[kind]
	if !ok {
		return nil
	}
	steps := strings.Split(path, ".")
	return func(obj object.Object) string { return fieldValue(obj, steps) }
}

// TriggerValue reports the value sel requires kind's trigger field to
// equal ("spec.nodeName=n1" gives "n1"), if it requires one.
func (sel Selector) TriggerValue(kind string) (string, bool) {
	path, ok := triggerFields[kind]
	if !ok {
		return "", false
	}
	for _, req := range sel {
		if req.equal && req.path == path {
			return req.value, true
		}
	}
	return "", false
}
