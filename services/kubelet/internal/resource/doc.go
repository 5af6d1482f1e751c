// Package resource counts resources as the kubelet needs them: quantities
// ("100m", "128Mi", "1.5Gi", "2", parsed by pkg/resource) as amounts, CPU
// in millicores and everything else in whole units (bytes, pods); lists of
// them; a pod's requests (the sum over its containers, raised to its
// largest init container) and limits; and amounts written back as
// quantities. Admission, cgroup limits, node capacity and the downward API
// use it.
package resource
