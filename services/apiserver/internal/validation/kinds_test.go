package validation

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/object"
	appsv1 "podline.dev/proto/apps/v1"
	coordinationv1 "podline.dev/proto/coordination/v1"
	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
	metav1 "podline.dev/proto/meta/v1"
	rbacv1 "podline.dev/proto/rbac/v1"
)

func TestValidObjectsPass(t *testing.T) {
	for _, obj := range []object.Object{
		&corev1.Pod{Spec: validPodSpec()},
		validDeployment(),
		&corev1.Service{Spec: &corev1.ServiceSpec{Type: "ClusterIP", SessionAffinity: "None",
			Ports: []*corev1.ServicePort{{Port: 80, Protocol: "TCP", TargetPort: &metav1.IntOrString{Type: 1, StrVal: "http"}}}}},
		&corev1.Node{Spec: &corev1.NodeSpec{PodCidr: "10.244.1.0/24", Taints: []*corev1.Taint{{Key: "node.kubernetes.io/not-ready", Effect: "NoSchedule"}}}},
		&corev1.ConfigMap{Data: map[string]string{"app.properties": "a=b"}},
		&corev1.Secret{Type: "kubernetes.io/tls", Data: map[string][]byte{"tls.crt": {1}, "tls.key": {2}}},
		&coordinationv1.Lease{Spec: &coordinationv1.LeaseSpec{LeaseDurationSeconds: proto.Int32(15)}},
		&discoveryv1.EndpointSlice{AddressType: "IPv4", Endpoints: []*discoveryv1.Endpoint{{Addresses: []string{"10.244.1.2"}}},
			Ports: []*discoveryv1.EndpointPort{{Name: proto.String("http"), Port: proto.Int32(80), Protocol: proto.String("TCP")}}},
		&corev1.Endpoints{Subsets: []*corev1.EndpointSubset{{
			Addresses:         []*corev1.EndpointAddress{{Ip: "10.244.1.5", NodeName: proto.String("worker-1"), TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "web-1"}}},
			NotReadyAddresses: []*corev1.EndpointAddress{{Ip: "fd00::7", Hostname: "web-2"}},
			Ports:             []*corev1.EndpointPort{{Name: "http", Port: 80, Protocol: "TCP", AppProtocol: proto.String("http")}, {Name: "dns", Port: 53, Protocol: "UDP"}}}}},
		&corev1.Endpoints{Subsets: []*corev1.EndpointSubset{{Addresses: []*corev1.EndpointAddress{{Ip: "10.244.1.5"}}}}}, // headless: no ports
		&rbacv1.Role{Rules: []*rbacv1.PolicyRule{{Verbs: []string{"get"}, ApiGroups: []string{""}, Resources: []string{"pods"}}}},
		&rbacv1.ClusterRole{Rules: []*rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceUrls: []string{"/healthz"}}}},
		&rbacv1.RoleBinding{RoleRef: &rbacv1.RoleRef{ApiGroup: RBACGroup, Kind: "Role", Name: "r"},
			Subjects: []*rbacv1.Subject{{Kind: "User", ApiGroup: RBACGroup, Name: "alice"}, {Kind: "ServiceAccount", Name: "default"}}},
	} {
		if errs := ValidateKind(obj); len(errs) > 0 {
			t.Errorf("%T refused: %v", obj, errs)
		}
	}
}

func TestInvalidDeploymentListsEveryField(t *testing.T) {
	d := validDeployment()
	d.Spec.Replicas = proto.Int32(-1)
	d.Spec.Template.Metadata.Labels = map[string]string{"app": "other"}
	c := d.Spec.Template.Spec.Containers[0]
	c.Image = ""
	c.Ports[0].ContainerPort = 70000
	c.Ports[0].Protocol = "ICMP"
	c.Resources.Requests["cpu"] = "2"
	c.Resources.Limits["memory"] = "lots"
	d.Spec.Template.Spec.RestartPolicy = "Never"
	d.Spec.Strategy.Type = "BlueGreen"
	d.Spec.RevisionHistoryLimit = proto.Int32(-3)
	expectFields(t, ValidateKind(d),
		"spec.replicas: Invalid value",
		"spec.template.metadata.labels: Invalid value",
		"spec.template.spec.containers[0].image: Required value",
		"spec.template.spec.containers[0].ports[0].containerPort: Invalid value",
		"spec.template.spec.containers[0].ports[0].protocol: Unsupported value",
		"spec.template.spec.containers[0].resources.requests[cpu]: Invalid value",
		"spec.template.spec.containers[0].resources.limits[memory]: Invalid value",
		"spec.template.spec.restartPolicy: Unsupported value",
		"spec.strategy.type: Unsupported value",
		"spec.revisionHistoryLimit: Invalid value",
	)
}

func TestDeploymentRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		mut  func(d *appsv1.Deployment)
		want []string
	}{
		{"selector missing", func(d *appsv1.Deployment) { d.Spec.Selector = nil }, []string{"spec.selector: Required value"}},
		{"selector empty", func(d *appsv1.Deployment) { d.Spec.Selector = &metav1.LabelSelector{} }, []string{"spec.selector: Invalid value"}},
		{"bad selector operator", func(d *appsv1.Deployment) {
			d.Spec.Selector.MatchExpressions = []*metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near", Values: []string{"x"}}}
		}, []string{"spec.selector.matchExpressions[0].operator: Unsupported value", "spec.template.metadata.labels: Invalid value"}},
		{"both rolling limits zero", func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: &metav1.IntOrString{}, MaxUnavailable: &metav1.IntOrString{Type: 1, StrVal: "0%"}}
		}, []string{"spec.strategy.rollingUpdate.maxUnavailable: Invalid value"}},
		{"maxUnavailable over 100%", func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate.MaxUnavailable = &metav1.IntOrString{Type: 1, StrVal: "150%"}
		}, []string{"spec.strategy.rollingUpdate.maxUnavailable: Invalid value"}},
		{"maxSurge not a percent", func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate.MaxSurge = &metav1.IntOrString{Type: 1, StrVal: "lots"}
		}, []string{"spec.strategy.rollingUpdate.maxSurge: Invalid value"}},
		{"progress deadline not after minReady", func(d *appsv1.Deployment) {
			d.Spec.MinReadySeconds = 600
		}, []string{"spec.progressDeadlineSeconds: Invalid value"}},
		{"template without containers", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers = nil }, []string{"spec.template.spec.containers: Required value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := validDeployment()
			tc.mut(d)
			expectFields(t, ValidateKind(d), tc.want...)
		})
	}
}

func TestPodSpecRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		mut  func(s *corev1.PodSpec)
		want []string
	}{
		{"duplicate container names", func(s *corev1.PodSpec) {
			s.Containers = append(s.Containers, &corev1.Container{Name: "web", Image: "x", ImagePullPolicy: "Always", TerminationMessagePolicy: "File"})
		}, []string{"spec.containers[1].name: Duplicate value"}},
		{"container name not a DNS label", func(s *corev1.PodSpec) { s.Containers[0].Name = "Web_1" }, []string{"spec.containers[0].name: Invalid value"}},
		{"mount of an unknown volume", func(s *corev1.PodSpec) {
			s.Containers[0].VolumeMounts = []*corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		}, []string{"spec.containers[0].volumeMounts[0].name: Not found"}},
		{"volume without a source", func(s *corev1.PodSpec) { s.Volumes = []*corev1.Volume{{Name: "v"}} }, []string{"spec.volumes[0]: Required value"}},
		{"volume with two sources", func(s *corev1.PodSpec) {
			s.Volumes = []*corev1.Volume{{Name: "v", EmptyDir: &corev1.EmptyDirVolumeSource{}, HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}}
		}, []string{"spec.volumes[0]: Forbidden"}},
		{"request over limit", func(s *corev1.PodSpec) { s.Containers[0].Resources.Requests["memory"] = "1Gi" }, []string{"spec.containers[0].resources.requests[memory]: Invalid value"}},
		{"negative quantity", func(s *corev1.PodSpec) { s.Containers[0].Resources.Requests["cpu"] = "-1" }, []string{"spec.containers[0].resources.requests[cpu]: Invalid value"}},
		{"bad port name", func(s *corev1.PodSpec) { s.Containers[0].Ports[0].Name = "HTTP--1" }, []string{"spec.containers[0].ports[0].name: Invalid value", "spec.containers[0].ports[0].name: Invalid value"}},
		{"host port out of range", func(s *corev1.PodSpec) { s.Containers[0].Ports[0].HostPort = 70000 }, []string{"spec.containers[0].ports[0].hostPort: Invalid value"}},
		{"bad env name", func(s *corev1.PodSpec) { s.Containers[0].Env = []*corev1.EnvVar{{Name: "1X"}} }, []string{"spec.containers[0].env[0].name: Invalid value"}},
		{"unknown restart policy", func(s *corev1.PodSpec) { s.RestartPolicy = "Sometimes" }, []string{"spec.restartPolicy: Unsupported value"}},
		{"negative grace period", func(s *corev1.PodSpec) { s.TerminationGracePeriodSeconds = proto.Int64(-5) }, []string{"spec.terminationGracePeriodSeconds: Invalid value"}},
		{"toleration exists with value", func(s *corev1.PodSpec) {
			s.Tolerations = []*corev1.Toleration{{Key: "k", Operator: "Exists", Value: "v"}}
		}, []string{"spec.tolerations[0].operator: Invalid value"}},
		{"toleration seconds without NoExecute", func(s *corev1.PodSpec) {
			s.Tolerations = []*corev1.Toleration{{Key: "k", Operator: "Exists", Effect: "NoSchedule", TolerationSeconds: proto.Int64(5)}}
		}, []string{"spec.tolerations[0].effect: Invalid value"}},
		{"liveness probe without handler", func(s *corev1.PodSpec) {
			s.Containers[0].LivenessProbe = &corev1.Probe{SuccessThreshold: 1}
		}, []string{"spec.containers[0].livenessProbe: Required value"}},
		{"liveness success threshold", func(s *corev1.PodSpec) {
			s.Containers[0].LivenessProbe = &corev1.Probe{TcpSocket: &corev1.TCPSocketAction{Port: &metav1.IntOrString{IntVal: 80}}, SuccessThreshold: 2}
		}, []string{"spec.containers[0].livenessProbe.successThreshold: Invalid value"}},
		{"bad node selector", func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"zone": "a b"} }, []string{"spec.nodeSelector: Invalid value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validPodSpec()
			tc.mut(s)
			expectFields(t, ValidateKind(&corev1.Pod{Spec: s}), tc.want...)
		})
	}
}

func TestOtherKinds(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  object.Object
		want []string
	}{
		{"service without ports", &corev1.Service{Spec: &corev1.ServiceSpec{Type: "ClusterIP", SessionAffinity: "None"}}, []string{"spec.ports: Required value"}},
		{"service port checks", &corev1.Service{Spec: &corev1.ServiceSpec{Type: "ClusterIP", SessionAffinity: "None", Ports: []*corev1.ServicePort{
			{Name: "a", Port: 0, Protocol: "TCP"}, {Port: 80, Protocol: "TCP", NodePort: 30080}}}},
			[]string{"spec.ports[0].port: Invalid value", "spec.ports[1].name: Required value", "spec.ports[1].nodePort: Forbidden"}},
		{"service type", &corev1.Service{Spec: &corev1.ServiceSpec{Type: "Magic", SessionAffinity: "None", ClusterIp: "None", ClusterIps: []string{"None"}}}, []string{"spec.type: Unsupported value"}},
		{"headless NodePort", &corev1.Service{Spec: &corev1.ServiceSpec{Type: "NodePort", SessionAffinity: "None", ClusterIp: "None", ClusterIps: []string{"None"},
			Ports: []*corev1.ServicePort{{Port: 80, Protocol: "TCP"}}}}, []string{"spec.clusterIPs[0]: Invalid value"}},
		{"duplicate ports and node ports", &corev1.Service{Spec: &corev1.ServiceSpec{Type: "NodePort", SessionAffinity: "None", Ports: []*corev1.ServicePort{
			{Name: "a", Port: 80, Protocol: "TCP", NodePort: 30080}, {Name: "b", Port: 80, Protocol: "TCP", NodePort: 30080}, {Name: "c", Port: 80, Protocol: "UDP"}}}},
			[]string{"spec.ports[1]: Duplicate value", "spec.ports[1].nodePort: Duplicate value"}},
		{"ExternalName needs a name and no IP", &corev1.Service{Spec: &corev1.ServiceSpec{Type: "ExternalName", SessionAffinity: "None", ClusterIp: "10.96.0.5", ClusterIps: []string{"10.96.0.5"}}},
			[]string{"spec.externalName: Required value", "spec.clusterIPs: Forbidden"}},
		{"clusterIPs must follow clusterIP", &corev1.Service{Spec: &corev1.ServiceSpec{Type: "ClusterIP", SessionAffinity: "None", ClusterIp: "10.96.0.5", ClusterIps: []string{"10.96.0.6"},
			IpFamilyPolicy: proto.String("Single"), Ports: []*corev1.ServicePort{{Port: 80, Protocol: "TCP"}}}},
			[]string{"spec.clusterIPs: Invalid value", "spec.ipFamilyPolicy: Unsupported value"}},
		{"ClientIP timeout bounds", &corev1.Service{Spec: &corev1.ServiceSpec{Type: "ClusterIP", SessionAffinity: "ClientIP",
			SessionAffinityConfig: &corev1.SessionAffinityConfig{ClientIp: &corev1.ClientIPConfig{TimeoutSeconds: proto.Int32(86401)}},
			Ports:                 []*corev1.ServicePort{{Port: 80, Protocol: "TCP"}}}},
			[]string{"spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value"}},
		{"affinity config with None", &corev1.Service{Spec: &corev1.ServiceSpec{Type: "ClusterIP", SessionAffinity: "None",
			SessionAffinityConfig: &corev1.SessionAffinityConfig{ClientIp: &corev1.ClientIPConfig{TimeoutSeconds: proto.Int32(10)}},
			Ports:                 []*corev1.ServicePort{{Port: 80, Protocol: "TCP"}}}},
			[]string{"spec.sessionAffinityConfig: Invalid value"}},
		{"node taint", &corev1.Node{Spec: &corev1.NodeSpec{PodCidr: "10.244.1.0", Taints: []*corev1.Taint{{Key: "a"}}}},
			[]string{"spec.podCIDR: Invalid value", "spec.taints[0].effect: Required value"}},
		{"configmap key", &corev1.ConfigMap{Data: map[string]string{"a/b": "x"}}, []string{"data[a/b]: Invalid value"}},
		{"tls secret without key", &corev1.Secret{Type: "kubernetes.io/tls", Data: map[string][]byte{"tls.crt": {1}}}, []string{"data[tls.key]: Required value"}},
		{"lease duration", &coordinationv1.Lease{Spec: &coordinationv1.LeaseSpec{LeaseDurationSeconds: proto.Int32(0)}}, []string{"spec.leaseDurationSeconds: Invalid value"}},
		{"event namespace", &corev1.Event{Metadata: &metav1.ObjectMeta{Namespace: "a"}, InvolvedObject: &corev1.ObjectReference{Namespace: "b"}}, []string{"involvedObject.namespace: Invalid value"}},
		{"endpointslice", &discoveryv1.EndpointSlice{AddressType: "IPv4", Endpoints: []*discoveryv1.Endpoint{{Addresses: []string{"not-an-ip"}}, {}}},
			[]string{"endpoints[0].addresses[0]: Invalid value", "endpoints[1].addresses: Required value"}},
		{"endpoints subsets", &corev1.Endpoints{Subsets: []*corev1.EndpointSubset{
			{Ports: []*corev1.EndpointPort{{Port: 80, Protocol: "TCP"}}},
			{Addresses: []*corev1.EndpointAddress{{Ip: "10.244.1"}, {Ip: "127.0.0.1"}, {Ip: "0.0.0.0"}, {Ip: "169.254.169.254"}, {Ip: "10.244.1.2", Hostname: "Web_1", NodeName: proto.String("Worker..1")}},
				NotReadyAddresses: []*corev1.EndpointAddress{{Ip: "fe80::1"}, {Ip: "224.0.0.251"}},
				Ports:             []*corev1.EndpointPort{{Name: "http", Port: 0, Protocol: "TCP"}, {Port: 65536, Protocol: "ICMP"}, {Name: "x", Port: 81, AppProtocol: proto.String("not a name")}}},
		}}, []string{
			"subsets[0]: Required value",
			"subsets[1].addresses[0].ip: Invalid value",
			"subsets[1].addresses[1].ip: Invalid value",
			"subsets[1].addresses[2].ip: Invalid value",
			"subsets[1].addresses[3].ip: Invalid value",
			"subsets[1].addresses[4].hostname: Invalid value",
			"subsets[1].addresses[4].nodeName: Invalid value",
			"subsets[1].notReadyAddresses[0].ip: Invalid value",
			"subsets[1].notReadyAddresses[1].ip: Invalid value",
			"subsets[1].ports[0].port: Invalid value",
			"subsets[1].ports[1].name: Required value",
			"subsets[1].ports[1].port: Invalid value",
			"subsets[1].ports[1].protocol: Unsupported value",
			"subsets[1].ports[2].protocol: Required value",
			"subsets[1].ports[2].appProtocol: Invalid value",
		}},
		{"role rules", &rbacv1.Role{Rules: []*rbacv1.PolicyRule{{Resources: []string{"pods"}}, {Verbs: []string{"get"}, NonResourceUrls: []string{"/x"}}}},
			[]string{"rules[0].verbs: Required value", "rules[0].apiGroups: Required value", "rules[1].nonResourceURLs: Invalid value"}},
		{"binding", &rbacv1.ClusterRoleBinding{RoleRef: &rbacv1.RoleRef{Kind: "Role", Name: "r"}, Subjects: []*rbacv1.Subject{{Kind: "Robot", Name: "x"}, {Kind: "ServiceAccount", Name: "sa"}}},
			[]string{"roleRef.apiGroup: Unsupported value", "roleRef.kind: Unsupported value", "subjects[0].kind: Unsupported value", "subjects[1].namespace: Required value"}},
	} {
		t.Run(tc.name, func(t *testing.T) { expectFields(t, ValidateKind(tc.obj), tc.want...) })
	}
}

func TestUpdateRules(t *testing.T) {
	pod := &corev1.Pod{Spec: validPodSpec()}
	pod.Spec.Tolerations = []*corev1.Toleration{{Key: "a", Operator: "Exists", Effect: "NoExecute", TolerationSeconds: proto.Int64(300)}}
	for _, tc := range []struct {
		name string
		mut  func(p *corev1.Pod)
		want []string
	}{
		{"image may change", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "web:2.0" }, nil},
		{"toleration added, seconds shortened", func(p *corev1.Pod) {
			p.Spec.Tolerations[0].TolerationSeconds = proto.Int64(10)
			p.Spec.Tolerations = append(p.Spec.Tolerations, &corev1.Toleration{Key: "b", Operator: "Exists"})
		}, nil},
		{"active deadline set", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = proto.Int64(60) }, nil},
		{"restart policy is immutable", func(p *corev1.Pod) { p.Spec.RestartPolicy = "Never" }, []string{"spec: Forbidden"}},
		{"node name is immutable", func(p *corev1.Pod) { p.Spec.NodeName = "n1" }, []string{"spec: Forbidden"}},
		{"toleration removed", func(p *corev1.Pod) { p.Spec.Tolerations = nil }, []string{"spec.tolerations: Forbidden"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := proto.Clone(pod).(*corev1.Pod)
			tc.mut(next)
			expectFields(t, ValidateKindUpdate(next, pod), tc.want...)
		})
	}
	d := validDeployment()
	d2 := proto.Clone(d).(*appsv1.Deployment)
	d2.Spec.Selector.MatchLabels["tier"] = "front"
	expectFields(t, ValidateKindUpdate(d2, d), "spec.selector: Invalid value")
	rb := &rbacv1.RoleBinding{RoleRef: &rbacv1.RoleRef{ApiGroup: RBACGroup, Kind: "Role", Name: "a"}}
	rb2 := proto.Clone(rb).(*rbacv1.RoleBinding)
	rb2.RoleRef.Name = "b"
	expectFields(t, ValidateKindUpdate(rb2, rb), "roleRef: Invalid value")
	cm := &corev1.ConfigMap{Immutable: proto.Bool(true), Data: map[string]string{"a": "1"}}
	cm2 := proto.Clone(cm).(*corev1.ConfigMap)
	cm2.Data["a"] = "2"
	expectFields(t, ValidateKindUpdate(cm2, cm), "data: Forbidden")
	node := &corev1.Node{Spec: &corev1.NodeSpec{}}
	withCIDR := proto.Clone(node).(*corev1.Node)
	withCIDR.Spec.PodCidr, withCIDR.Spec.PodCidrs = "10.244.1.0/24", []string{"10.244.1.0/24"}
	expectFields(t, ValidateKindUpdate(withCIDR, node))
	moved := proto.Clone(withCIDR).(*corev1.Node)
	moved.Spec.PodCidr, moved.Spec.PodCidrs = "10.244.2.0/24", []string{"10.244.2.0/24"}
	expectFields(t, ValidateKindUpdate(moved, withCIDR), "spec.podCIDRs: Forbidden")
	es := &discoveryv1.EndpointSlice{AddressType: "IPv4"}
	es2 := proto.Clone(es).(*discoveryv1.EndpointSlice)
	es2.AddressType = "IPv6"
	expectFields(t, ValidateKindUpdate(es2, es), "addressType: Invalid value")
	svc := &corev1.Service{Spec: &corev1.ServiceSpec{ClusterIp: "10.96.0.10"}}
	svc2 := proto.Clone(svc).(*corev1.Service)
	svc2.Spec.ClusterIp = "10.96.0.11"
	expectFields(t, ValidateKindUpdate(svc2, svc), "spec.clusterIP: Invalid value")
}

func TestEndpointIPMessagesNameTheRange(t *testing.T) {
	for ip, want := range map[string]string{
		"127.0.0.1":       "may not be in the loopback range (127.0.0.0/8, ::1/128)",
		"::":              "may not be unspecified (::)",
		"169.254.169.254": "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
		"ff02::fb":        "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
		"10.244.1":        "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
	} {
		e := &corev1.Endpoints{Subsets: []*corev1.EndpointSubset{{Addresses: []*corev1.EndpointAddress{{Ip: ip}}}}}
		errs := ValidateKind(e)
		if len(errs) != 1 || errs[0].Detail != want || errs[0].Field != "subsets[0].addresses[0].ip" {
			t.Errorf("%s: %v, want %q", ip, errs, want)
		}
	}
}
