package node

import corev1 "podline.dev/proto/core/v1"

// References lists what a Pod uses by resource ("secrets", "configmaps",
// "persistentvolumeclaims") and name: volumes (projected sources too),
// env and envFrom of every container, and image pull secrets.
func References(p *corev1.Pod) map[string]map[string]bool {
	refs := map[string]map[string]bool{"secrets": {}, "configmaps": {}, "persistentvolumeclaims": {}}
	add := func(resource, name string) {
		if name != "" {
			refs[resource][name] = true
		}
	}
	spec := p.GetSpec()
	for _, s := range spec.GetImagePullSecrets() {
		add("secrets", s.GetName())
	}
	for _, v := range spec.GetVolumes() {
		add("secrets", v.GetSecret().GetSecretName())
		add("configmaps", v.GetConfigMap().GetName())
		add("persistentvolumeclaims", v.GetPersistentVolumeClaim().GetClaimName())
		for _, src := range v.GetProjected().GetSources() {
			add("secrets", src.GetSecret().GetName())
			add("configmaps", src.GetConfigMap().GetName())
		}
	}
	for _, c := range append(append([]*corev1.Container{}, spec.GetInitContainers()...), spec.GetContainers()...) {
		for _, e := range c.GetEnv() {
			add("secrets", e.GetValueFrom().GetSecretKeyRef().GetName())
			add("configmaps", e.GetValueFrom().GetConfigMapKeyRef().GetName())
		}
		for _, e := range c.GetEnvFrom() {
			add("secrets", e.GetSecretRef().GetName())
			add("configmaps", e.GetConfigMapRef().GetName())
		}
	}
	return refs
}
