package backends

import (
	"sort"

	"google.golang.org/protobuf/proto"

	corev1 "podline.dev/proto/core/v1"
)

// Port is a Service port resolved in one pod.
type Port struct {
	// Name and Protocol are the Service port's (Protocol TCP when unset).
	Name     string
	Protocol string
	// Port is the number the targetPort resolves to in the pod.
	Port int32
	// AppProtocol is the Service port's, nil when unset.
	AppProtocol *string
}

// Ports resolves each port of svc in pod, ordered by name. A targetPort
// that names a container port the pod does not have (with the Service
// port's protocol) leaves that port out, as in Kubernetes.
func Ports(svc *corev1.Service, pod *corev1.Pod) []Port {
	var out []Port
	for _, sp := range svc.GetSpec().GetPorts() {
		n, ok := FindPort(pod, sp)
		if !ok {
			continue
		}
		p := Port{Name: sp.GetName(), Protocol: protocolOf(sp.GetProtocol()), Port: n}
		if sp.AppProtocol != nil {
			p.AppProtocol = proto.String(sp.GetAppProtocol())
		}
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// FindPort is the number sp's targetPort resolves to in pod: a named
// targetPort is looked up among the containers' ports with the same
// protocol; a number is itself; none is the Service port.
func FindPort(pod *corev1.Pod, sp *corev1.ServicePort) (int32, bool) {
	tp := sp.GetTargetPort()
	if tp.GetType() == 1 {
		protocol := protocolOf(sp.GetProtocol())
		for _, c := range pod.GetSpec().GetContainers() {
			for _, p := range c.GetPorts() {
				if p.GetName() == tp.GetStrVal() && protocolOf(p.GetProtocol()) == protocol {
					return p.GetContainerPort(), true
				}
			}
		}
		return 0, false
	}
	if tp.GetIntVal() != 0 {
		return tp.GetIntVal(), true
	}
	return sp.GetPort(), true
}

func protocolOf(p string) string {
	if p == "" {
		return "TCP"
	}
	return p
}
