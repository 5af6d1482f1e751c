// Package resource reads Kubernetes resource quantities ("100m", "128Mi",
// "1.5Gi", "2") as the kubelet needs them: CPU in millicores and everything
// else in whole units (bytes, pods), with the sum of a pod's requests and
// limits over its containers. It is the small part of apimachinery's
// resource.Quantity the kubelet uses for admission, cgroup limits, node
// capacity and the downward API.
package resource
