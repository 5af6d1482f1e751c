// Package k8sproto reads request bodies in Kubernetes' protobuf encoding
// (application/vnd.kubernetes.protobuf), which client-go's typed clients and
// kubectl send, and turns them into the Kubernetes JSON of the same object,
// so that the REST layer decodes, validates and stores them exactly as it
// does a JSON body.
//
// A body is the four bytes "k8s\x00" and a runtime.Unknown message whose
// typeMeta names the apiVersion and kind and whose raw field holds the object
// in Kubernetes' generated protobuf. Kubernetes' field numbers differ from
// podline's own .proto files, so the object is walked with protowire against
// fields.txt: a table, per Kubernetes message, of field number, JSON name
// and type. A field number the table does not know is refused, never
// dropped. e2e/compat derives the same table from the k8s.io/api Go types
// and fails on any difference; its -update-k8sproto-table flag rewrites the
// message blocks after a kind line is added.
package k8sproto
