// Command podline-cri is podline's CRI runtime service: the node daemon
// the kubelet speaks CRI to over a unix socket. It runs pod sandboxes and
// containers on containerd (namespace "podline") and attaches sandboxes to
// the pod network with CNI, so neither containerd nor CNI is the kubelet's
// business.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"podline.dev/pkg/telemetry"
	"podline.dev/services/cri/internal/daemon"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "podline-cri:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	cfg := daemon.Defaults()
	var otlp, logLevel, cniBinDirs string
	fs := flag.NewFlagSet("podline-cri", flag.ContinueOnError)
	fs.StringVar(&cfg.Listen, "listen", cfg.Listen, "the CRI unix socket to serve on")
	fs.StringVar(&cfg.Containerd, "containerd", cfg.Containerd, "containerd's socket")
	fs.StringVar(&cfg.Namespace, "namespace", cfg.Namespace, "the containerd namespace of pods (k8s.io is containerd's own CRI plugin's)")
	fs.StringVar(&cfg.SandboxImage, "sandbox-image", cfg.SandboxImage, "the pause image")
	fs.StringVar(&cfg.Snapshotter, "snapshotter", cfg.Snapshotter, "the containerd snapshotter")
	fs.StringVar(&cfg.RootDir, "root-dir", cfg.RootDir, "where sandbox files (resolv.conf, hosts, hostname) are kept")
	fs.StringVar(&cfg.StateDir, "state-dir", cfg.StateDir, "where stream FIFOs are made (a tmpfs)")
	fs.StringVar(&cfg.NetNSDir, "netns-dir", cfg.NetNSDir, "where sandbox network namespaces are pinned")
	fs.StringVar(&cfg.HostsDir, "registry-config", cfg.HostsDir, "the registry hosts directory (<host:port>/hosts.toml)")
	fs.StringVar(&cfg.CgroupParent, "cgroup-parent", cfg.CgroupParent, "the cgroup pods are made under when the kubelet names none")
	fs.StringVar(&cfg.ImageFsDir, "image-fs", cfg.ImageFsDir, "a directory on the image filesystem, for ImageFsInfo")
	fs.StringVar(&cfg.CNIConfDir, "cni-conf-dir", cfg.CNIConfDir, "the CNI configuration directory")
	fs.StringVar(&cniBinDirs, "cni-bin-dir", strings.Join(cfg.CNIBinDirs, ","), "the CNI plugin directories, comma-separated")
	fs.StringVar(&cfg.CNICacheDir, "cni-cache-dir", cfg.CNICacheDir, "libcni's result cache")
	fs.StringVar(&cfg.PodCIDR, "pod-cidr", "", "fills ${POD_CIDR} in a CNI template until the kubelet sends the node's")
	fs.StringVar(&cfg.StreamAddr, "stream-address", cfg.StreamAddr, "the streaming server's address for exec, attach and port-forward")
	fs.BoolVar(&cfg.AllowPrivileged, "allow-privileged", false, "run privileged containers (refused otherwise)")
	fs.StringVar(&otlp, "otlp-endpoint", "", telemetry.EndpointFlagUsage)
	fs.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.CNIBinDirs = strings.Split(cniBinDirs, ",")
	var level slog.Level
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(cfg.Logger)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	shutdown, err := telemetry.Setup(ctx, "podline-cri", otlp)
	if err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	defer func() { _ = shutdown(context.WithoutCancel(ctx)) }()

	d, err := daemon.Start(ctx, cfg)
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		cfg.Logger.Info("stopping; containers keep running")
		d.Stop()
		return nil
	case err := <-d.Done():
		d.Stop()
		return err
	}
}
