package validation

import (
	"fmt"
	"slices"

	"podline.dev/pkg/field"
	corev1 "podline.dev/proto/core/v1"
)

var (
	restartPolicies   = []string{"Always", "Never", "OnFailure"}
	dnsPolicies       = []string{"ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"}
	pullPolicies      = []string{"Always", "IfNotPresent", "Never"}
	messagePolicies   = []string{"FallbackToLogsOnError", "File"}
	tolerationOps     = []string{"Equal", "Exists"}
	schemes           = []string{"HTTP", "HTTPS"}
	preemptPolicies   = []string{"Never", "PreemptLowerPriority"}
	computeResources  = []string{"cpu", "ephemeral-storage", "memory"}
	tolerationEffects = append([]string{""}, validEffects...)
)

// ValidatePodSpec checks a pod spec with Kubernetes' rules.
func ValidatePodSpec(s *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	volumes, verrs := validateVolumes(s.GetVolumes(), p.Child("volumes"))
	errs = append(errs, verrs...)
	if len(s.GetContainers()) == 0 {
		errs = append(errs, field.Required(p.Child("containers"), ""))
	}
	names := map[string]bool{}
	errs = append(errs, validateContainers(s.GetInitContainers(), p.Child("initContainers"), volumes, names, true)...)
	errs = append(errs, validateContainers(s.GetContainers(), p.Child("containers"), volumes, names, false)...)
	errs = append(errs, oneOf(s.GetRestartPolicy(), restartPolicies, p.Child("restartPolicy"))...)
	errs = append(errs, oneOf(s.GetDnsPolicy(), dnsPolicies, p.Child("dnsPolicy"))...)
	if s.TerminationGracePeriodSeconds != nil {
		errs = append(errs, nonNegative(s.GetTerminationGracePeriodSeconds(), p.Child("terminationGracePeriodSeconds"))...)
	}
	if s.ActiveDeadlineSeconds != nil && s.GetActiveDeadlineSeconds() <= 0 {
		errs = append(errs, field.Invalid(p.Child("activeDeadlineSeconds"), s.GetActiveDeadlineSeconds(), "must be between 1 and 2147483647, inclusive"))
	}
	errs = append(errs, ValidateLabels(s.GetNodeSelector(), p.Child("nodeSelector"))...)
	if n := s.GetServiceAccountName(); n != "" {
		errs = append(errs, dns1123Subdomain(n, p.Child("serviceAccountName"))...)
	}
	if n := s.GetNodeName(); n != "" {
		errs = append(errs, dns1123Subdomain(n, p.Child("nodeName"))...)
	}
	if h := s.GetHostname(); h != "" {
		errs = append(errs, dns1123Label(h, p.Child("hostname"))...)
	}
	if d := s.GetSubdomain(); d != "" {
		errs = append(errs, dns1123Label(d, p.Child("subdomain"))...)
	}
	if n := s.GetSchedulerName(); n != "" {
		errs = append(errs, dns1123Subdomain(n, p.Child("schedulerName"))...)
	}
	if n := s.GetPriorityClassName(); n != "" {
		errs = append(errs, dns1123Subdomain(n, p.Child("priorityClassName"))...)
	}
	if s.PreemptionPolicy != nil {
		errs = append(errs, oneOf(s.GetPreemptionPolicy(), preemptPolicies, p.Child("preemptionPolicy"))...)
	}
	errs = append(errs, validateTolerations(s.GetTolerations(), p.Child("tolerations"))...)
	for i, ha := range s.GetHostAliases() {
		errs = append(errs, ipAddress(ha.GetIp(), p.Child("hostAliases").Index(i).Child("ip"))...)
	}
	if s.GetDnsPolicy() == "None" && s.GetDnsConfig() == nil {
		errs = append(errs, field.Required(p.Child("dnsConfig"), "must provide `dnsConfig` when `dnsPolicy` is None"))
	}
	for i, c := range s.GetTopologySpreadConstraints() {
		cp := p.Child("topologySpreadConstraints").Index(i)
		if c.GetMaxSkew() <= 0 {
			errs = append(errs, field.Invalid(cp.Child("maxSkew"), c.GetMaxSkew(), "must be greater than zero"))
		}
		if c.GetTopologyKey() == "" {
			errs = append(errs, field.Required(cp.Child("topologyKey"), "can not be empty"))
		}
		errs = append(errs, oneOf(c.GetWhenUnsatisfiable(), []string{"DoNotSchedule", "ScheduleAnyway"}, cp.Child("whenUnsatisfiable"))...)
	}
	return errs
}

func validateTolerations(ts []*corev1.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		tp := p.Index(i)
		if t.GetKey() != "" {
			errs = append(errs, qualifiedName(t.GetKey(), tp.Child("key"))...)
		}
		if t.GetKey() == "" && t.GetOperator() != "Exists" {
			errs = append(errs, field.Invalid(tp.Child("operator"), t.GetOperator(), "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.GetEffect() != "NoExecute" {
			errs = append(errs, field.Invalid(tp.Child("effect"), t.GetEffect(), "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.GetOperator() {
		case "", "Equal":
			for _, msg := range IsValidLabelValue(t.GetValue()) {
				errs = append(errs, field.Invalid(tp.Child("value"), t.GetValue(), msg))
			}
		case "Exists":
			if t.GetValue() != "" {
				errs = append(errs, field.Invalid(tp.Child("operator"), t.GetValue(), "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(tp.Child("operator"), t.GetOperator(), tolerationOps))
		}
		errs = append(errs, oneOf(t.GetEffect(), tolerationEffects, tp.Child("effect"))...)
	}
	return errs
}

func validateVolumes(vs []*corev1.Volume, p *field.Path) (map[string]bool, field.ErrorList) {
	var errs field.ErrorList
	names := map[string]bool{}
	for i, v := range vs {
		vp := p.Index(i)
		if v.GetName() == "" {
			errs = append(errs, field.Required(vp.Child("name"), ""))
		} else {
			errs = append(errs, dns1123Label(v.GetName(), vp.Child("name"))...)
			if names[v.GetName()] {
				errs = append(errs, field.Duplicate(vp.Child("name"), v.GetName()))
			}
			names[v.GetName()] = true
		}
		n := 0
		for _, set := range []bool{v.HostPath != nil, v.EmptyDir != nil, v.Secret != nil, v.PersistentVolumeClaim != nil,
			v.DownwardApi != nil, v.ConfigMap != nil, v.Projected != nil} {
			if set {
				n++
			}
		}
		switch {
		case n == 0:
			errs = append(errs, field.Required(vp, "must specify a volume type"))
		case n > 1:
			errs = append(errs, field.Forbidden(vp, "may not specify more than 1 volume type"))
		}
		switch {
		case v.HostPath != nil && v.HostPath.GetPath() == "":
			errs = append(errs, field.Required(vp.Child("hostPath", "path"), ""))
		case v.Secret != nil && v.Secret.GetSecretName() == "":
			errs = append(errs, field.Required(vp.Child("secret", "secretName"), ""))
		case v.ConfigMap != nil && v.ConfigMap.GetName() == "":
			errs = append(errs, field.Required(vp.Child("configMap", "name"), ""))
		case v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.GetClaimName() == "":
			errs = append(errs, field.Required(vp.Child("persistentVolumeClaim", "claimName"), ""))
		case v.EmptyDir != nil && v.EmptyDir.SizeLimit != nil:
			_, qerrs := quantity(v.EmptyDir.GetSizeLimit(), vp.Child("emptyDir", "sizeLimit"))
			errs = append(errs, qerrs...)
		}
	}
	return names, errs
}

func validateContainers(cs []*corev1.Container, p *field.Path, volumes, names map[string]bool, init bool) field.ErrorList {
	var errs field.ErrorList
	for i, c := range cs {
		cp := p.Index(i)
		if c.GetName() == "" {
			errs = append(errs, field.Required(cp.Child("name"), ""))
		} else {
			errs = append(errs, dns1123Label(c.GetName(), cp.Child("name"))...)
			if names[c.GetName()] {
				errs = append(errs, field.Duplicate(cp.Child("name"), c.GetName()))
			}
			names[c.GetName()] = true
		}
		if c.GetImage() == "" {
			errs = append(errs, field.Required(cp.Child("image"), ""))
		}
		errs = append(errs, oneOf(c.GetImagePullPolicy(), pullPolicies, cp.Child("imagePullPolicy"))...)
		errs = append(errs, oneOf(c.GetTerminationMessagePolicy(), messagePolicies, cp.Child("terminationMessagePolicy"))...)
		if c.RestartPolicy != nil {
			if !init {
				errs = append(errs, field.Forbidden(cp.Child("restartPolicy"), "may not be set for non-init containers"))
			} else if c.GetRestartPolicy() != "Always" {
				errs = append(errs, field.NotSupported(cp.Child("restartPolicy"), c.GetRestartPolicy(), []string{"Always"}))
			}
		}
		errs = append(errs, validatePorts(c.GetPorts(), cp.Child("ports"))...)
		for j, e := range c.GetEnv() {
			errs = append(errs, envVarName(e.GetName(), cp.Child("env").Index(j).Child("name"))...)
		}
		errs = append(errs, validateResources(c.GetResources(), cp.Child("resources"))...)
		for j, m := range c.GetVolumeMounts() {
			mp := cp.Child("volumeMounts").Index(j)
			if m.GetName() == "" {
				errs = append(errs, field.Required(mp.Child("name"), ""))
			} else if !volumes[m.GetName()] {
				errs = append(errs, &field.Error{Type: field.ErrorTypeNotFound, Field: mp.Child("name").String(), BadValue: m.GetName()})
			}
			if m.GetMountPath() == "" {
				errs = append(errs, field.Required(mp.Child("mountPath"), ""))
			}
		}
		probes := []struct {
			name string
			pr   *corev1.Probe
		}{{"livenessProbe", c.GetLivenessProbe()}, {"readinessProbe", c.GetReadinessProbe()}, {"startupProbe", c.GetStartupProbe()}}
		for _, pr := range probes {
			if pr.pr == nil {
				continue
			}
			if init && c.RestartPolicy == nil {
				errs = append(errs, field.Forbidden(cp.Child(pr.name), "may not be set for init containers without restartPolicy=Always"))
				continue
			}
			errs = append(errs, validateProbe(pr.pr, cp.Child(pr.name), pr.name != "readinessProbe" && pr.name != "startupProbe")...)
		}
	}
	return errs
}

func validatePorts(ports []*corev1.ContainerPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for j, port := range ports {
		pp := p.Index(j)
		if n := port.GetName(); n != "" {
			errs = append(errs, portName(n, pp.Child("name"))...)
			if names[n] {
				errs = append(errs, field.Duplicate(pp.Child("name"), n))
			}
			names[n] = true
		}
		errs = append(errs, portNumber(port.GetContainerPort(), pp.Child("containerPort"))...)
		if hp := port.GetHostPort(); hp != 0 {
			errs = append(errs, portNumber(hp, pp.Child("hostPort"))...)
		}
		errs = append(errs, protocol(port.GetProtocol(), pp.Child("protocol"))...)
		if ip := port.GetHostIp(); ip != "" {
			errs = append(errs, ipAddress(ip, pp.Child("hostIP"))...)
		}
	}
	return errs
}

// validateResources checks quantities and that no request exceeds its limit.
func validateResources(r *corev1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	limits := map[string]int64{}
	for _, k := range sortedKeys(r.GetLimits()) {
		kp := p.Child("limits").Key(k)
		errs = append(errs, resourceName(k, kp)...)
		m, qerrs := quantity(r.GetLimits()[k], kp)
		errs = append(errs, qerrs...)
		if len(qerrs) == 0 {
			limits[k] = m
		}
	}
	for _, k := range sortedKeys(r.GetRequests()) {
		kp := p.Child("requests").Key(k)
		errs = append(errs, resourceName(k, kp)...)
		m, qerrs := quantity(r.GetRequests()[k], kp)
		errs = append(errs, qerrs...)
		if l, ok := limits[k]; ok && len(qerrs) == 0 && m > l {
			errs = append(errs, field.Invalid(kp, r.GetRequests()[k], fmt.Sprintf("must be less than or equal to %s limit of %s", k, r.GetLimits()[k])))
		}
	}
	return errs
}

// resourceName accepts the compute resources and qualified extended names.
func resourceName(k string, p *field.Path) field.ErrorList {
	if slices.Contains(computeResources, k) {
		return nil
	}
	if errs := qualifiedName(k, p); len(errs) > 0 {
		return errs
	}
	for i := 0; i < len(k); i++ {
		if k[i] == '/' {
			return nil
		}
	}
	return field.ErrorList{field.Invalid(p, k, "must be a standard resource type or fully qualified")}
}

func validateProbe(pr *corev1.Probe, p *field.Path, liveness bool) field.ErrorList {
	var errs field.ErrorList
	n := 0
	for _, set := range []bool{pr.Exec != nil, pr.HttpGet != nil, pr.TcpSocket != nil, pr.Grpc != nil} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		errs = append(errs, field.Required(p, "must specify a handler type"))
	case n > 1:
		errs = append(errs, field.Forbidden(p, "may not specify more than 1 handler type"))
	}
	errs = append(errs, nonNegative(int64(pr.GetInitialDelaySeconds()), p.Child("initialDelaySeconds"))...)
	errs = append(errs, nonNegative(int64(pr.GetTimeoutSeconds()), p.Child("timeoutSeconds"))...)
	errs = append(errs, nonNegative(int64(pr.GetPeriodSeconds()), p.Child("periodSeconds"))...)
	errs = append(errs, nonNegative(int64(pr.GetFailureThreshold()), p.Child("failureThreshold"))...)
	if liveness && pr.GetSuccessThreshold() != 1 {
		errs = append(errs, field.Invalid(p.Child("successThreshold"), pr.GetSuccessThreshold(), "must be 1"))
	}
	if h := pr.GetHttpGet(); h != nil {
		errs = append(errs, probePort(h.GetPort(), p.Child("httpGet", "port"))...)
		errs = append(errs, oneOf(h.GetScheme(), schemes, p.Child("httpGet", "scheme"))...)
	}
	if t := pr.GetTcpSocket(); t != nil {
		errs = append(errs, probePort(t.GetPort(), p.Child("tcpSocket", "port"))...)
	}
	if g := pr.GetGrpc(); g != nil {
		errs = append(errs, portNumber(g.GetPort(), p.Child("grpc", "port"))...)
	}
	if e := pr.GetExec(); e != nil && len(e.GetCommand()) == 0 {
		errs = append(errs, field.Required(p.Child("exec", "command"), ""))
	}
	return errs
}

func probePort(v interface {
	GetType() int32
	GetIntVal() int32
	GetStrVal() string
}, p *field.Path) field.ErrorList {
	if v.GetType() == 0 {
		return portNumber(v.GetIntVal(), p)
	}
	return portName(v.GetStrVal(), p)
}
