// Package patch applies the patch formats of Kubernetes' PATCH verb to an
// object held as JSON values (map[string]any, []any, string, json.Number,
// bool, nil), with no I/O:
//
//   - merge.go: JSON merge patch (RFC 7386, application/merge-patch+json);
//   - jsonpatch.go: JSON patch (RFC 6902, application/json-patch+json);
//   - strategic.go: strategic merge patch (application/strategic-merge-patch+json),
//     lists merged by the merge keys in schema.go and the directives
//     client-side kubectl apply sends ($patch, $retainKeys,
//     $setElementOrder, $deleteFromPrimitiveList);
//   - fieldset.go, managed.go and apply.go: managed fields (fieldsV1 sets per
//     field manager) and server-side apply with its conflicts;
//   - fieldsjson.go and values.go: readers of the server's own JSON text (an
//     object as k8sjson.Marshal writes it) that skip encoding/json: a
//     create's managed members straight from the text, and the values an
//     update diffs.
//
// The registry decodes the current object to JSON values, calls one of these,
// and decodes the result back into the object before validating it.
package patch
