// Package printers turns API objects into meta.k8s.io/v1 Tables, the
// server-side printing kubectl asks for with
// `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`. Each kind has a
// handler (one file per API group) with Kubernetes' column definitions and a
// pure row function of the object and the current time; table.go finds the
// handler by the object's proto message, walks lists, and attaches each
// row's object as PartialObjectMetadata or the full object as the request's
// includeObject asks. Ages read as kubectl prints them (age.go). Columns
// with priority 1 are the ones kubectl shows only with `-o wide`; the server
// always sends them, as kube-apiserver does.
package printers
