package proxier

import (
	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// serviceWrapper builds a Service for tests: MakeService("default",
// "web").ClusterIP("10.96.0.20").Port("http", 80, "http").Obj().
type serviceWrapper struct{ s *corev1.Service }

func MakeService(namespace, name string) *serviceWrapper {
	return &serviceWrapper{&corev1.Service{
		ApiVersion: "v1", Kind: "Service",
		Metadata: &metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:     &corev1.ServiceSpec{Type: "ClusterIP"},
	}}
}

func (w *serviceWrapper) ClusterIP(ip string) *serviceWrapper {
	w.s.Spec.ClusterIp, w.s.Spec.ClusterIps = ip, []string{ip}
	return w
}

func (w *serviceWrapper) Type(t string) *serviceWrapper { w.s.Spec.Type = t; return w }

func (w *serviceWrapper) ExternalName(name string) *serviceWrapper {
	w.s.Spec.Type, w.s.Spec.ExternalName = "ExternalName", name
	return w
}

// Port adds a TCP port whose targetPort is target: a number or a name.
func (w *serviceWrapper) Port(name string, port int32, target any) *serviceWrapper {
	return w.PortProto(name, "TCP", port, target, 0)
}

// PortProto adds a port with a protocol and a nodePort (0: none).
func (w *serviceWrapper) PortProto(name, proto string, port int32, target any, nodePort int32) *serviceWrapper {
	tp := &metav1.IntOrString{}
	switch v := target.(type) {
	case int:
		tp.IntVal = int32(v)
	case string:
		tp.Type, tp.StrVal = 1, v
	}
	w.s.Spec.Ports = append(w.s.Spec.Ports, &corev1.ServicePort{Name: name, Protocol: proto, Port: port, TargetPort: tp, NodePort: nodePort})
	return w
}

func (w *serviceWrapper) ClientIPAffinity(seconds int32) *serviceWrapper {
	w.s.Spec.SessionAffinity = "ClientIP"
	w.s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIp: &corev1.ClientIPConfig{TimeoutSeconds: &seconds}}
	return w
}

func (w *serviceWrapper) Obj() *corev1.Service { return w.s }

// sliceWrapper builds an EndpointSlice of a Service for tests.
type sliceWrapper struct{ s *discoveryv1.EndpointSlice }

func MakeSlice(namespace, service, name string) *sliceWrapper {
	return &sliceWrapper{&discoveryv1.EndpointSlice{
		ApiVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice",
		Metadata: &metav1.ObjectMeta{Namespace: namespace, Name: name,
			Labels: map[string]string{LabelServiceName: service}},
		AddressType: "IPv4",
	}}
}

func ptr[T any](v T) *T { return &v }

// Port adds a TCP slice port: the resolved target port of the Service port name.
func (w *sliceWrapper) Port(name string, port int32) *sliceWrapper {
	w.s.Ports = append(w.s.Ports, &discoveryv1.EndpointPort{Name: ptr(name), Protocol: ptr("TCP"), Port: ptr(port)})
	return w
}

func (w *sliceWrapper) endpoint(ip string, ready, serving, terminating bool) *sliceWrapper {
	w.s.Endpoints = append(w.s.Endpoints, &discoveryv1.Endpoint{Addresses: []string{ip},
		Conditions: &discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating}})
	return w
}

func (w *sliceWrapper) Ready(ips ...string) *sliceWrapper {
	for _, ip := range ips {
		w.endpoint(ip, true, true, false)
	}
	return w
}

func (w *sliceWrapper) NotReady(ip string) *sliceWrapper { return w.endpoint(ip, false, false, false) }

// Terminating adds an endpoint of a Pod being deleted, serving or not.
func (w *sliceWrapper) Terminating(ip string, serving bool) *sliceWrapper {
	return w.endpoint(ip, false, serving, true)
}

func (w *sliceWrapper) Traceparent(tp string) *sliceWrapper {
	w.s.Metadata.Annotations = map[string]string{"podline.dev/traceparent": tp}
	return w
}

func (w *sliceWrapper) Obj() *discoveryv1.EndpointSlice { return w.s }
