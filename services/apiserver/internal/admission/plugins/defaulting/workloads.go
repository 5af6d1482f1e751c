package defaulting

import (
	"google.golang.org/protobuf/proto"

	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
)

// Kubernetes' Deployment defaults.
const (
	DefaultRevisionHistoryLimit    = 10
	DefaultProgressDeadlineSeconds = 600
)

func deployment(d *appsv1.Deployment) {
	if d.Spec == nil {
		d.Spec = &appsv1.DeploymentSpec{}
	}
	s := d.Spec
	if s.Replicas == nil {
		s.Replicas = proto.Int32(1)
	}
	if s.Strategy == nil {
		s.Strategy = &appsv1.DeploymentStrategy{}
	}
	if s.Strategy.Type == "" {
		s.Strategy.Type = "RollingUpdate"
	}
	if s.Strategy.Type == "RollingUpdate" {
		if s.Strategy.RollingUpdate == nil {
			s.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		if s.Strategy.RollingUpdate.MaxUnavailable == nil {
			s.Strategy.RollingUpdate.MaxUnavailable = percent25()
		}
		if s.Strategy.RollingUpdate.MaxSurge == nil {
			s.Strategy.RollingUpdate.MaxSurge = percent25()
		}
	}
	if s.RevisionHistoryLimit == nil {
		s.RevisionHistoryLimit = proto.Int32(DefaultRevisionHistoryLimit)
	}
	if s.ProgressDeadlineSeconds == nil {
		s.ProgressDeadlineSeconds = proto.Int32(DefaultProgressDeadlineSeconds)
	}
	template(s.Template)
}

func service(svc *corev1.Service) {
	if svc.Spec == nil {
		svc.Spec = &corev1.ServiceSpec{}
	}
	s := svc.Spec
	if s.Type == "" {
		s.Type = "ClusterIP"
	}
	if s.SessionAffinity == "" {
		s.SessionAffinity = "None"
	}
	for _, p := range s.Ports {
		if p.Protocol == "" {
			p.Protocol = "TCP"
		}
		if p.TargetPort == nil || (p.TargetPort.Type == 0 && p.TargetPort.IntVal == 0) {
			p.TargetPort = intOrStringInt(p.Port)
		}
	}
	if s.Type != "ExternalName" && s.InternalTrafficPolicy == nil {
		s.InternalTrafficPolicy = proto.String("Cluster")
	}
	if (s.Type == "NodePort" || s.Type == "LoadBalancer") && s.ExternalTrafficPolicy == "" {
		s.ExternalTrafficPolicy = "Cluster"
	}
	if cfg := s.GetSessionAffinityConfig().GetClientIp(); s.SessionAffinity == "ClientIP" && (cfg == nil || cfg.TimeoutSeconds == nil) {
		if s.SessionAffinityConfig == nil {
			s.SessionAffinityConfig = &corev1.SessionAffinityConfig{}
		}
		if s.SessionAffinityConfig.ClientIp == nil {
			s.SessionAffinityConfig.ClientIp = &corev1.ClientIPConfig{}
		}
		s.SessionAffinityConfig.ClientIp.TimeoutSeconds = proto.Int32(10800)
	}
}
