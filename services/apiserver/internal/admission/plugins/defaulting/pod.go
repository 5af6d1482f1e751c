package defaulting

import (
	"strings"

	"google.golang.org/protobuf/proto"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// Kubernetes' pod defaults.
const (
	DefaultSchedulerName                 = "default-scheduler"
	DefaultTerminationGracePeriodSeconds = 30
	DefaultTerminationMessagePath        = "/dev/termination-log"
	// DefaultMode is 0644, the mode of files in secret, configMap,
	// downwardAPI and projected volumes.
	DefaultMode = 0o644
)

// PodSpec sets Kubernetes' defaults on a pod spec.
func PodSpec(s *corev1.PodSpec) {
	if s.DnsPolicy == "" {
		s.DnsPolicy = "ClusterFirst"
	}
	if s.RestartPolicy == "" {
		s.RestartPolicy = "Always"
	}
	if s.TerminationGracePeriodSeconds == nil {
		s.TerminationGracePeriodSeconds = proto.Int64(DefaultTerminationGracePeriodSeconds)
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &corev1.PodSecurityContext{}
	}
	if s.SchedulerName == "" {
		s.SchedulerName = DefaultSchedulerName
	}
	if s.EnableServiceLinks == nil {
		s.EnableServiceLinks = proto.Bool(true)
	}
	// serviceAccount is the deprecated alias; Kubernetes keeps both equal.
	if s.ServiceAccountName == "" {
		s.ServiceAccountName = s.ServiceAccount
	}
	if s.ServiceAccount == "" {
		s.ServiceAccount = s.ServiceAccountName
	}
	for _, c := range s.InitContainers {
		container(c)
	}
	for _, c := range s.Containers {
		container(c)
	}
	for _, v := range s.Volumes {
		volume(v)
	}
}

func container(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = PullPolicy(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = DefaultTerminationMessagePath
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = "File"
	}
	for _, p := range c.Ports {
		if p.Protocol == "" {
			p.Protocol = "TCP"
		}
	}
	for _, e := range c.Env {
		if f := e.GetValueFrom().GetFieldRef(); f != nil && f.ApiVersion == "" {
			f.ApiVersion = "v1"
		}
	}
	// A limit without a request requests the limit, as Kubernetes defaults it.
	if r := c.Resources; r != nil && len(r.Limits) > 0 {
		for k, v := range r.Limits {
			if _, ok := r.Requests[k]; !ok {
				if r.Requests == nil {
					r.Requests = map[string]string{}
				}
				r.Requests[k] = v
			}
		}
	}
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		probe(p)
	}
	if l := c.Lifecycle; l != nil {
		httpGet(l.GetPostStart().GetHttpGet())
		httpGet(l.GetPreStop().GetHttpGet())
	}
}

// PullPolicy is Kubernetes' default imagePullPolicy for an image: Always
// for the tag latest or no tag, IfNotPresent for any other tag or a digest.
func PullPolicy(image string) string {
	if strings.Contains(image, "@") {
		return "IfNotPresent"
	}
	name := image[strings.LastIndex(image, "/")+1:]
	i := strings.LastIndex(name, ":")
	if i < 0 || name[i+1:] == "latest" {
		return "Always"
	}
	return "IfNotPresent"
}

func probe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	httpGet(p.HttpGet)
}

func httpGet(h *corev1.HTTPGetAction) {
	if h == nil {
		return
	}
	if h.Path == "" {
		h.Path = "/"
	}
	if h.Scheme == "" {
		h.Scheme = "HTTP"
	}
}

func volume(v *corev1.Volume) {
	switch {
	case v.Secret != nil:
		if v.Secret.DefaultMode == nil {
			v.Secret.DefaultMode = proto.Int32(DefaultMode)
		}
	case v.ConfigMap != nil:
		if v.ConfigMap.DefaultMode == nil {
			v.ConfigMap.DefaultMode = proto.Int32(DefaultMode)
		}
	case v.DownwardApi != nil:
		if v.DownwardApi.DefaultMode == nil {
			v.DownwardApi.DefaultMode = proto.Int32(DefaultMode)
		}
		fieldRefs(v.DownwardApi.Items)
	case v.Projected != nil:
		if v.Projected.DefaultMode == nil {
			v.Projected.DefaultMode = proto.Int32(DefaultMode)
		}
		for _, s := range v.Projected.Sources {
			if t := s.ServiceAccountToken; t != nil && t.ExpirationSeconds == nil {
				t.ExpirationSeconds = proto.Int64(3600)
			}
			fieldRefs(s.GetDownwardApi().GetItems())
		}
	case v.HostPath != nil:
		if v.HostPath.Type == nil {
			v.HostPath.Type = proto.String("")
		}
	case v.PersistentVolumeClaim != nil:
	default:
		// A volume with no source is an emptyDir, as in Kubernetes.
		if v.EmptyDir == nil {
			v.EmptyDir = &corev1.EmptyDirVolumeSource{}
		}
	}
}

func fieldRefs(items []*corev1.DownwardAPIVolumeFile) {
	for _, it := range items {
		if it.FieldRef != nil && it.FieldRef.ApiVersion == "" {
			it.FieldRef.ApiVersion = "v1"
		}
	}
}

// percent25 is the default maxSurge and maxUnavailable.
func percent25() *metav1.IntOrString { return &metav1.IntOrString{Type: 1, StrVal: "25%"} }

func intOrStringInt(v int32) *metav1.IntOrString { return &metav1.IntOrString{IntVal: v} }
