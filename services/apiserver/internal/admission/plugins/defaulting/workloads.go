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

func (d *defaulter) deployment(dep *appsv1.Deployment) {
	if dep.Spec == nil {
		dep.Spec = mark(d, &appsv1.DeploymentSpec{})
	}
	s := dep.Spec
	if s.Replicas == nil {
		s.Replicas = mark(d, proto.Int32(1))
	}
	if s.Strategy == nil {
		s.Strategy = mark(d, &appsv1.DeploymentStrategy{})
	}
	d.str(&s.Strategy.Type, "RollingUpdate")
	if s.Strategy.Type == "RollingUpdate" {
		if s.Strategy.RollingUpdate == nil {
			s.Strategy.RollingUpdate = mark(d, &appsv1.RollingUpdateDeployment{})
		}
		if s.Strategy.RollingUpdate.MaxUnavailable == nil {
			s.Strategy.RollingUpdate.MaxUnavailable = mark(d, percent25())
		}
		if s.Strategy.RollingUpdate.MaxSurge == nil {
			s.Strategy.RollingUpdate.MaxSurge = mark(d, percent25())
		}
	}
	if s.RevisionHistoryLimit == nil {
		s.RevisionHistoryLimit = mark(d, proto.Int32(DefaultRevisionHistoryLimit))
	}
	if s.ProgressDeadlineSeconds == nil {
		s.ProgressDeadlineSeconds = mark(d, proto.Int32(DefaultProgressDeadlineSeconds))
	}
	d.template(s.Template)
}

func (d *defaulter) service(svc *corev1.Service) {
	if svc.Spec == nil {
		svc.Spec = mark(d, &corev1.ServiceSpec{})
	}
	s := svc.Spec
	d.str(&s.Type, "ClusterIP")
	d.str(&s.SessionAffinity, "None")
	for _, p := range s.Ports {
		d.str(&p.Protocol, "TCP")
		if p.TargetPort == nil || (p.TargetPort.Type == 0 && p.TargetPort.IntVal == 0) {
			target := intOrStringInt(p.Port)
			if !proto.Equal(p.TargetPort, target) {
				p.TargetPort = mark(d, target)
			}
		}
	}
	if s.Type != "ExternalName" && s.InternalTrafficPolicy == nil {
		s.InternalTrafficPolicy = mark(d, proto.String("Cluster"))
	}
	if s.Type == "NodePort" || s.Type == "LoadBalancer" {
		d.str(&s.ExternalTrafficPolicy, "Cluster")
	}
	if cfg := s.GetSessionAffinityConfig().GetClientIp(); s.SessionAffinity == "ClientIP" && (cfg == nil || cfg.TimeoutSeconds == nil) {
		if s.SessionAffinityConfig == nil {
			s.SessionAffinityConfig = &corev1.SessionAffinityConfig{}
		}
		if s.SessionAffinityConfig.ClientIp == nil {
			s.SessionAffinityConfig.ClientIp = &corev1.ClientIPConfig{}
		}
		s.SessionAffinityConfig.ClientIp.TimeoutSeconds = mark(d, proto.Int32(10800))
	}
}
