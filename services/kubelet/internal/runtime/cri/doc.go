// Package cri is the kubelet's runtime.Runtime over the Container Runtime
// Interface: k8s.io/cri-api runtime.v1 RuntimeService and ImageService
// gRPC clients on the runtime's unix socket (--container-runtime-endpoint,
// --image-service-endpoint). The runtime (podline-cri, or containerd's
// own CRI plugin) creates the sandbox and calls CNI in RunPodSandbox, so
// the kubelet reads the pod's IPs from PodSandboxStatus and never touches
// the pod network itself. The trace context travels in gRPC metadata
// (otelgrpc), so the runtime's spans are children of the kubelet's.
//
// sandbox.go and container.go map the kubelet's narrow types to CRI's
// messages and back (labels and annotations carry what CRI has no field
// for: the container hash, the restart count, init); stream.go speaks the
// runtime streaming server's WebSocket channel protocols for Exec and
// PortForward, whose URLs CRI's Exec and PortForward return.
package cri
