package test

import (
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// sandboxBuilder builds a PodSandboxConfig as the kubelet fills it.
type sandboxBuilder struct{ c *runtimeapi.PodSandboxConfig }

func makeSandbox(name, logDir string) *sandboxBuilder {
	uid := "uid-" + name
	return &sandboxBuilder{&runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "default", Uid: uid},
		Hostname:     name,
		LogDirectory: logDir,
		Labels: map[string]string{
			"io.kubernetes.pod.name": name, "io.kubernetes.pod.namespace": "default", "io.kubernetes.pod.uid": uid,
		},
		Annotations: map[string]string{"podline.dev/test": "yes"},
		Linux:       &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{}},
	}}
}

func (b *sandboxBuilder) dns(servers, searches, options []string) *sandboxBuilder {
	b.c.DnsConfig = &runtimeapi.DNSConfig{Servers: servers, Searches: searches, Options: options}
	return b
}

func (b *sandboxBuilder) sysctl(k, v string) *sandboxBuilder {
	if b.c.Linux.Sysctls == nil {
		b.c.Linux.Sysctls = map[string]string{}
	}
	b.c.Linux.Sysctls[k] = v
	return b
}

func (b *sandboxBuilder) obj() *runtimeapi.PodSandboxConfig { return b.c }

// containerBuilder builds a ContainerConfig.
type containerBuilder struct{ c *runtimeapi.ContainerConfig }

func makeContainer(name string, cmd ...string) *containerBuilder {
	return &containerBuilder{&runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name},
		Image:    &runtimeapi.ImageSpec{Image: busyboxImage},
		Command:  cmd,
		LogPath:  name + "/0.log",
		Labels:   map[string]string{"io.kubernetes.container.name": name},
		Linux:    &runtimeapi.LinuxContainerConfig{SecurityContext: &runtimeapi.LinuxContainerSecurityContext{}},
	}}
}

func (b *containerBuilder) env(k, v string) *containerBuilder {
	b.c.Envs = append(b.c.Envs, &runtimeapi.KeyValue{Key: k, Value: []byte(v)})
	return b
}

func (b *containerBuilder) user(uid, gid int64) *containerBuilder {
	sc := b.c.Linux.SecurityContext
	sc.RunAsUser = &runtimeapi.Int64Value{Value: uid}
	sc.RunAsGroup = &runtimeapi.Int64Value{Value: gid}
	return b
}

func (b *containerBuilder) supplementalGroups(g ...int64) *containerBuilder {
	b.c.Linux.SecurityContext.SupplementalGroups = g
	return b
}

func (b *containerBuilder) caps(add, drop []string) *containerBuilder {
	b.c.Linux.SecurityContext.Capabilities = &runtimeapi.Capability{AddCapabilities: add, DropCapabilities: drop}
	return b
}

func (b *containerBuilder) readOnlyRoot() *containerBuilder {
	b.c.Linux.SecurityContext.ReadonlyRootfs = true
	return b
}

func (b *containerBuilder) noNewPrivs() *containerBuilder {
	b.c.Linux.SecurityContext.NoNewPrivs = true
	return b
}

func (b *containerBuilder) seccomp(t runtimeapi.SecurityProfile_ProfileType) *containerBuilder {
	b.c.Linux.SecurityContext.Seccomp = &runtimeapi.SecurityProfile{ProfileType: t}
	return b
}

func (b *containerBuilder) privileged() *containerBuilder {
	b.c.Linux.SecurityContext.Privileged = true
	return b
}

func (b *containerBuilder) workingDir(d string) *containerBuilder { b.c.WorkingDir = d; return b }

func (b *containerBuilder) obj() *runtimeapi.ContainerConfig { return b.c }
