// Package sandboxfiles renders the files a pod sandbox gives each of its
// containers: /etc/resolv.conf from the PodSandboxConfig's DNS config (or
// the node's own when the config has none), /etc/hosts and /etc/hostname.
// It formats bytes only; the runtime writes them under the sandbox's
// directory and bind-mounts them into containers.
package sandboxfiles
