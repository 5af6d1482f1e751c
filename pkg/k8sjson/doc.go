// Package k8sjson is podline's one codec between its API messages (the
// proto3 types in podline.dev/proto) and Kubernetes JSON, the form kubectl,
// client-go and manifests use. It walks the messages through protoreflect,
// so one implementation serves every kind: field names are the descriptors'
// JSON names (set to Kubernetes'), integers are JSON numbers, plain proto3
// fields are omitted when zero while `optional` ones are written whenever
// set (Kubernetes' pointers), set messages are written even when empty
// ("emptyDir": {}), maps have sorted keys, and the podline.meta.v1 types
// Time, MicroTime, Duration and IntOrString take their Kubernetes scalar
// forms. Marshal and Encoder write; Unmarshal reads, handling unknown and
// duplicate fields as Kubernetes' fieldValidation does (Strict, Warn,
// Ignore) and reporting failures as *FieldError with the field path, ready
// to become the causes of a Status; TypeMeta peeks at apiVersion and kind.
// Per-message field tables are built once from the descriptors and cached.
package k8sjson
