package podsecurity

import (
	"fmt"
	"slices"
	"strings"

	corev1 "podline.dev/proto/core/v1"
)

// Level is a Pod Security Standard.
type Level int

// The three levels, each allowing less than the one before.
const (
	Privileged Level = iota
	Baseline
	Restricted
)

// ParseLevel reads a namespace label's value.
func ParseLevel(s string) (Level, bool) {
	switch s {
	case "privileged":
		return Privileged, true
	case "baseline":
		return Baseline, true
	case "restricted":
		return Restricted, true
	}
	return Privileged, false
}

func (l Level) String() string {
	return [...]string{"privileged", "baseline", "restricted"}[l]
}

// check is one rule: it returns the reason a spec violates it, or "".
type check struct {
	id    string
	level Level
	// overrides is the baseline check this restricted one replaces.
	overrides string
	fn        func(*podView) string
}

// checks are Kubernetes' Pod Security Standards checks, ordered by id as
// Kubernetes reports them.
var checks = []check{
	{id: "allowPrivilegeEscalation", level: Restricted, fn: allowPrivilegeEscalation},
	{id: "appArmorProfile", level: Baseline, fn: appArmor},
	{id: "capabilities_baseline", level: Baseline, fn: capabilitiesBaseline},
	{id: "capabilities_restricted", level: Restricted, overrides: "capabilities_baseline", fn: capabilitiesRestricted},
	{id: "hostNamespaces", level: Baseline, fn: hostNamespaces},
	{id: "hostPathVolumes", level: Baseline, fn: hostPathVolumes},
	{id: "hostPorts", level: Baseline, fn: hostPorts},
	{id: "privileged", level: Baseline, fn: privileged},
	{id: "procMount", level: Baseline, fn: procMount},
	{id: "restrictedVolumes", level: Restricted, overrides: "hostPathVolumes", fn: restrictedVolumes},
	{id: "runAsNonRoot", level: Restricted, fn: runAsNonRoot},
	{id: "runAsUser", level: Restricted, fn: runAsUser},
	{id: "seLinuxOptions", level: Baseline, fn: seLinux},
	{id: "seccompProfile_baseline", level: Baseline, fn: seccompBaseline},
	{id: "seccompProfile_restricted", level: Restricted, overrides: "seccompProfile_baseline", fn: seccompRestricted},
	{id: "sysctls", level: Baseline, fn: sysctls},
}

// Evaluate returns the reasons spec violates level, in Kubernetes' order.
func Evaluate(level Level, spec *corev1.PodSpec) []string {
	if level == Privileged || spec == nil {
		return nil
	}
	skip := map[string]bool{}
	if level == Restricted {
		for _, c := range checks {
			if c.overrides != "" {
				skip[c.overrides] = true
			}
		}
	}
	v := newPodView(spec)
	var out []string
	for _, c := range checks {
		if c.level > level || skip[c.id] {
			continue
		}
		if r := c.fn(v); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// podView is the spec's containers (init and regular, in order) with names.
type podView struct {
	spec       *corev1.PodSpec
	containers []*corev1.Container
}

func newPodView(s *corev1.PodSpec) *podView {
	return &podView{spec: s, containers: append(append([]*corev1.Container(nil), s.GetInitContainers()...), s.GetContainers()...)}
}

// failing lists the quoted names of containers for which bad is true.
func (v *podView) failing(bad func(c *corev1.Container) bool) []string {
	var names []string
	for _, c := range v.containers {
		if bad(c) {
			names = append(names, fmt.Sprintf("%q", c.GetName()))
		}
	}
	return names
}

// containers renders `container "a"` or `containers "a", "b"`.
func containers(names []string) string {
	if len(names) == 1 {
		return "container " + names[0]
	}
	return "containers " + strings.Join(names, ", ")
}

func pluralize(one, many string, n int) string {
	if n == 1 {
		return one
	}
	return many
}

func allowPrivilegeEscalation(v *podView) string {
	names := v.failing(func(c *corev1.Container) bool {
		sc := c.GetSecurityContext()
		return sc == nil || sc.AllowPrivilegeEscalation == nil || sc.GetAllowPrivilegeEscalation()
	})
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("allowPrivilegeEscalation != false (%s must set securityContext.allowPrivilegeEscalation=false)", containers(names))
}

func appArmor(v *podView) string {
	bad := func(p *corev1.AppArmorProfile) bool { return p != nil && p.GetType() == "Unconfined" }
	if bad(v.spec.GetSecurityContext().GetAppArmorProfile()) {
		return `forbidden AppArmor profile (pod must not set appArmorProfile.type to "Unconfined")`
	}
	names := v.failing(func(c *corev1.Container) bool { return bad(c.GetSecurityContext().GetAppArmorProfile()) })
	if len(names) > 0 {
		return fmt.Sprintf(`forbidden AppArmor profile (%s must not set appArmorProfile.type to "Unconfined")`, containers(names))
	}
	return ""
}

var baselineCaps = []string{"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
	"NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}

func addedCaps(v *podView, allowed []string) string {
	var parts []string
	for _, c := range v.containers {
		var bad []string
		for _, cp := range c.GetSecurityContext().GetCapabilities().GetAdd() {
			if !slices.Contains(allowed, cp) {
				bad = append(bad, fmt.Sprintf("%q", cp))
			}
		}
		if len(bad) > 0 {
			parts = append(parts, fmt.Sprintf("container %q must not include %s in securityContext.capabilities.add", c.GetName(), strings.Join(bad, ", ")))
		}
	}
	return strings.Join(parts, "; ")
}

func capabilitiesBaseline(v *podView) string {
	if s := addedCaps(v, baselineCaps); s != "" {
		return "non-default capabilities (" + s + ")"
	}
	return ""
}

func capabilitiesRestricted(v *podView) string {
	var parts []string
	noDrop := v.failing(func(c *corev1.Container) bool {
		return !slices.Contains(c.GetSecurityContext().GetCapabilities().GetDrop(), "ALL")
	})
	if len(noDrop) > 0 {
		parts = append(parts, fmt.Sprintf(`%s must set securityContext.capabilities.drop=["ALL"]`, containers(noDrop)))
	}
	if s := addedCaps(v, []string{"NET_BIND_SERVICE"}); s != "" {
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return ""
	}
	return "unrestricted capabilities (" + strings.Join(parts, "; ") + ")"
}

func hostNamespaces(v *podView) string {
	var set []string
	if v.spec.GetHostNetwork() {
		set = append(set, "hostNetwork=true")
	}
	if v.spec.GetHostPid() {
		set = append(set, "hostPID=true")
	}
	if v.spec.GetHostIpc() {
		set = append(set, "hostIPC=true")
	}
	if len(set) == 0 {
		return ""
	}
	return "host namespaces (" + strings.Join(set, ", ") + ")"
}

func hostPathVolumes(v *podView) string {
	var names []string
	for _, vol := range v.spec.GetVolumes() {
		if vol.GetHostPath() != nil {
			names = append(names, fmt.Sprintf("%q", vol.GetName()))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("hostPath volumes (%s %s)", pluralize("volume", "volumes", len(names)), strings.Join(names, ", "))
}

func hostPorts(v *podView) string {
	var names, ports []string
	for _, c := range v.containers {
		used := false
		for _, p := range c.GetPorts() {
			if p.GetHostPort() != 0 {
				ports = append(ports, fmt.Sprint(p.GetHostPort()))
				used = true
			}
		}
		if used {
			names = append(names, fmt.Sprintf("%q", c.GetName()))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("hostPort (%s %s %s)", containers(names), pluralize("uses", "use", len(names)),
		pluralize("hostPort", "hostPorts", len(ports))+" "+strings.Join(ports, ", "))
}

func privileged(v *podView) string {
	names := v.failing(func(c *corev1.Container) bool { return c.GetSecurityContext().GetPrivileged() })
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("privileged (%s must not set securityContext.privileged=true)", containers(names))
}

func procMount(v *podView) string {
	names := v.failing(func(c *corev1.Container) bool {
		sc := c.GetSecurityContext()
		return sc != nil && sc.ProcMount != nil && *sc.ProcMount != "Default"
	})
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf(`procMount (%s must not set securityContext.procMount to "Unmasked")`, containers(names))
}

func restrictedVolumes(v *podView) string {
	var parts []string
	for _, vol := range v.spec.GetVolumes() {
		if vol.GetHostPath() != nil {
			parts = append(parts, fmt.Sprintf("volume %q uses restricted volume type \"hostPath\"", vol.GetName()))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "restricted volume types (" + strings.Join(parts, ", ") + ")"
}

func runAsNonRoot(v *podView) string {
	var podSet *bool
	if sc := v.spec.GetSecurityContext(); sc != nil {
		podSet = sc.RunAsNonRoot
	}
	if podSet != nil && !*podSet {
		return "runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)"
	}
	explicitFalse := v.failing(func(c *corev1.Container) bool {
		sc := c.GetSecurityContext()
		return sc != nil && sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot
	})
	if len(explicitFalse) > 0 {
		return fmt.Sprintf("runAsNonRoot != true (%s must not set securityContext.runAsNonRoot=false)", containers(explicitFalse))
	}
	if podSet != nil {
		return ""
	}
	unset := v.failing(func(c *corev1.Container) bool {
		return c.GetSecurityContext() == nil || c.GetSecurityContext().RunAsNonRoot == nil
	})
	if len(unset) == 0 {
		return ""
	}
	return fmt.Sprintf("runAsNonRoot != true (pod or %s must set securityContext.runAsNonRoot=true)", containers(unset))
}

func runAsUser(v *podView) string {
	if sc := v.spec.GetSecurityContext(); sc != nil && sc.RunAsUser != nil && *sc.RunAsUser == 0 {
		return "runAsUser=0 (pod must not set runAsUser=0)"
	}
	names := v.failing(func(c *corev1.Container) bool {
		sc := c.GetSecurityContext()
		return sc != nil && sc.RunAsUser != nil && *sc.RunAsUser == 0
	})
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("runAsUser=0 (%s must not set runAsUser=0)", containers(names))
}

var seLinuxTypes = []string{"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}

func seLinux(v *podView) string {
	bad := func(o *corev1.SELinuxOptions) bool {
		return o != nil && (!slices.Contains(seLinuxTypes, o.GetType()) || o.GetUser() != "" || o.GetRole() != "")
	}
	if bad(v.spec.GetSecurityContext().GetSeLinuxOptions()) {
		return "seLinuxOptions (pod set forbidden securityContext.seLinuxOptions)"
	}
	names := v.failing(func(c *corev1.Container) bool { return bad(c.GetSecurityContext().GetSeLinuxOptions()) })
	if len(names) > 0 {
		return fmt.Sprintf("seLinuxOptions (%s set forbidden securityContext.seLinuxOptions)", containers(names))
	}
	return ""
}

func seccompBaseline(v *podView) string {
	if v.spec.GetSecurityContext().GetSeccompProfile().GetType() == "Unconfined" {
		return `seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")`
	}
	names := v.failing(func(c *corev1.Container) bool {
		return c.GetSecurityContext().GetSeccompProfile().GetType() == "Unconfined"
	})
	if len(names) > 0 {
		return fmt.Sprintf(`seccompProfile (%s must not set securityContext.seccompProfile.type to "Unconfined")`, containers(names))
	}
	return ""
}

func seccompRestricted(v *podView) string {
	ok := func(t string) bool { return t == "RuntimeDefault" || t == "Localhost" }
	podType := v.spec.GetSecurityContext().GetSeccompProfile().GetType()
	if podType != "" && !ok(podType) {
		return fmt.Sprintf("seccompProfile (pod must not set securityContext.seccompProfile.type to %q)", podType)
	}
	explicit := v.failing(func(c *corev1.Container) bool {
		t := c.GetSecurityContext().GetSeccompProfile().GetType()
		return t != "" && !ok(t)
	})
	if len(explicit) > 0 {
		return fmt.Sprintf(`seccompProfile (%s must not set securityContext.seccompProfile.type to "Unconfined")`, containers(explicit))
	}
	if podType != "" {
		return ""
	}
	unset := v.failing(func(c *corev1.Container) bool { return c.GetSecurityContext().GetSeccompProfile().GetType() == "" })
	if len(unset) == 0 {
		return ""
	}
	return fmt.Sprintf(`seccompProfile (pod or %s must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`, containers(unset))
}

var safeSysctls = []string{"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
	"net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
	"net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"}

func sysctls(v *podView) string {
	var bad []string
	for _, s := range v.spec.GetSecurityContext().GetSysctls() {
		if !slices.Contains(safeSysctls, s.GetName()) {
			bad = append(bad, s.GetName())
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return "forbidden sysctls (" + strings.Join(bad, ", ") + ")"
}
