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

// PodSpec sets Kubernetes' defaults on a pod spec and reports whether it
// set any.
func PodSpec(s *corev1.PodSpec) bool {
	d := &defaulter{}
	d.podSpec(s)
	return d.changed
}

func (d *defaulter) podSpec(s *corev1.PodSpec) {
	d.str(&s.DnsPolicy, "ClusterFirst")
	d.str(&s.RestartPolicy, "Always")
	if s.TerminationGracePeriodSeconds == nil {
		s.TerminationGracePeriodSeconds = mark(d, proto.Int64(DefaultTerminationGracePeriodSeconds))
	}
	if s.SecurityContext == nil {
		s.SecurityContext = mark(d, &corev1.PodSecurityContext{})
	}
	d.str(&s.SchedulerName, DefaultSchedulerName)
	if s.EnableServiceLinks == nil {
		s.EnableServiceLinks = mark(d, proto.Bool(true))
	}
	// serviceAccount is the deprecated alias; Kubernetes keeps both equal.
	d.str(&s.ServiceAccountName, s.ServiceAccount)
	d.str(&s.ServiceAccount, s.ServiceAccountName)
	for _, c := range s.InitContainers {
		d.container(c)
	}
	for _, c := range s.Containers {
		d.container(c)
	}
	for _, v := range s.Volumes {
		d.volume(v)
	}
}

func (d *defaulter) container(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		d.str(&c.ImagePullPolicy, PullPolicy(c.Image))
	}
	d.str(&c.TerminationMessagePath, DefaultTerminationMessagePath)
	d.str(&c.TerminationMessagePolicy, "File")
	for _, p := range c.Ports {
		d.str(&p.Protocol, "TCP")
	}
	for _, e := range c.Env {
		if f := e.GetValueFrom().GetFieldRef(); f != nil {
			d.str(&f.ApiVersion, "v1")
		}
	}
	// A limit without a request requests the limit, as Kubernetes defaults it.
	if r := c.Resources; r != nil && len(r.Limits) > 0 {
		for k, v := range r.Limits {
			if _, ok := r.Requests[k]; !ok {
				if r.Requests == nil {
					r.Requests = map[string]string{}
				}
				r.Requests[k] = mark(d, v)
			}
		}
	}
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		d.probe(p)
	}
	if l := c.Lifecycle; l != nil {
		d.httpGet(l.GetPostStart().GetHttpGet())
		d.httpGet(l.GetPreStop().GetHttpGet())
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

func (d *defaulter) probe(p *corev1.Probe) {
	if p == nil {
		return
	}
	d.int32(&p.TimeoutSeconds, 1)
	d.int32(&p.PeriodSeconds, 10)
	d.int32(&p.SuccessThreshold, 1)
	d.int32(&p.FailureThreshold, 3)
	d.httpGet(p.HttpGet)
}

// int32 sets a zero int32 field to v.
func (d *defaulter) int32(f *int32, v int32) {
	if *f == 0 && v != 0 {
		*f = v
		d.changed = true
	}
}

func (d *defaulter) httpGet(h *corev1.HTTPGetAction) {
	if h == nil {
		return
	}
	d.str(&h.Path, "/")
	d.str(&h.Scheme, "HTTP")
}

func (d *defaulter) volume(v *corev1.Volume) {
	switch {
	case v.Secret != nil:
		d.mode(&v.Secret.DefaultMode)
	case v.ConfigMap != nil:
		d.mode(&v.ConfigMap.DefaultMode)
	case v.DownwardApi != nil:
		d.mode(&v.DownwardApi.DefaultMode)
		d.fieldRefs(v.DownwardApi.Items)
	case v.Projected != nil:
		d.mode(&v.Projected.DefaultMode)
		for _, s := range v.Projected.Sources {
			if t := s.ServiceAccountToken; t != nil && t.ExpirationSeconds == nil {
				t.ExpirationSeconds = mark(d, proto.Int64(3600))
			}
			d.fieldRefs(s.GetDownwardApi().GetItems())
		}
	case v.HostPath != nil:
		if v.HostPath.Type == nil {
			v.HostPath.Type = mark(d, proto.String(""))
		}
	case v.PersistentVolumeClaim != nil:
	default:
		// A volume with no source is an emptyDir, as in Kubernetes.
		if v.EmptyDir == nil {
			v.EmptyDir = mark(d, &corev1.EmptyDirVolumeSource{})
		}
	}
}

// mode sets an unset defaultMode to DefaultMode.
func (d *defaulter) mode(f **int32) {
	if *f == nil {
		*f = mark(d, proto.Int32(DefaultMode))
	}
}

func (d *defaulter) fieldRefs(items []*corev1.DownwardAPIVolumeFile) {
	for _, it := range items {
		if it.FieldRef != nil {
			d.str(&it.FieldRef.ApiVersion, "v1")
		}
	}
}

// percent25 is the default maxSurge and maxUnavailable.
func percent25() *metav1.IntOrString { return &metav1.IntOrString{Type: 1, StrVal: "25%"} }

func intOrStringInt(v int32) *metav1.IntOrString { return &metav1.IntOrString{IntVal: v} }
