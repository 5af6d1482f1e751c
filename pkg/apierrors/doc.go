// Package apierrors is the one place where podline's API errors are defined
// and mapped: each error is a Kubernetes Status (reason, code, message,
// details with field causes) that travels as the body of a REST error and as
// a detail of the matching gRPC status, so clients on either path can test it
// with the same Is* functions that client-go users know.
package apierrors
