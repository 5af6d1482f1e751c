// Package k8sjson is podline's one codec between its API messages (the
// proto3 types in podline.dev/proto) and Kubernetes JSON, the form kubectl,
// client-go and manifests use. One generic implementation serves every kind,
// driven by the message descriptors through per-type field tables built once
// and cached (fields.go): field names are the descriptors' JSON names (set to
// Kubernetes'), integers are JSON numbers, plain proto3 fields are omitted
// when zero while `optional` ones are written whenever set (Kubernetes'
// pointers), set messages are written even when empty ("emptyDir": {}), maps
// have sorted keys, the podline.meta.v1 types Time, MicroTime, Duration and
// IntOrString take their Kubernetes scalar forms (wellknown.go), and a few
// fields named by full name keep Kubernetes' special forms: quantities that
// may arrive as numbers, fieldsV1 kept as JSON, and the items of a List
// always written. Marshal and Encoder write (encode.go), normally by walking
// the message's protobuf binary form (wire.go), with a protoreflect walk as
// fallback; Unmarshal reads (decode.go over the scanner in scan.go), handling
// unknown and duplicate fields as Kubernetes' fieldValidation does (Strict,
// Warn, Ignore) and reporting failures as *FieldError with the field path,
// ready to become the causes of a Status; TypeMeta peeks at apiVersion and
// kind so a server can pick the message type first.
package k8sjson
