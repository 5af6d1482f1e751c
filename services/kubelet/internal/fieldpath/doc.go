// Package fieldpath resolves the downward API: a pod's fields by path
// (metadata.name, metadata.labels['app'], status.podIP, ...) and a
// container's resources (limits.cpu, requests.memory with a divisor), for
// environment variables and downwardAPI volume files alike.
package fieldpath
