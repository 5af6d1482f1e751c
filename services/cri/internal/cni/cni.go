package cni

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"

	"github.com/containernetworking/cni/libcni"
	types100 "github.com/containernetworking/cni/pkg/types/100"
)

// PodCIDRPlaceholder in a CNI configuration is replaced by the pod CIDR.
const PodCIDRPlaceholder = "${POD_CIDR}"

// Plugin is the libcni network.
type Plugin struct {
	confDir  string
	binDirs  []string
	cacheDir string
	log      *slog.Logger
	cni      *libcni.CNIConfig
	loopback *libcni.NetworkConfigList

	mu      sync.RWMutex
	podCIDR string
}

// Option configures a Plugin.
type Option func(*Plugin)

// WithConfDir is where the configurations are (/etc/cni/net.d).
func WithConfDir(dir string) Option { return func(p *Plugin) { p.confDir = dir } }

// WithBinDirs are where the plugins are (/usr/lib/cni, /opt/cni/bin).
func WithBinDirs(dirs ...string) Option { return func(p *Plugin) { p.binDirs = dirs } }

// WithCacheDir is libcni's result cache (/var/lib/cni).
func WithCacheDir(dir string) Option { return func(p *Plugin) { p.cacheDir = dir } }

// WithPodCIDR fills ${POD_CIDR} in configuration templates.
func WithPodCIDR(cidr string) Option { return func(p *Plugin) { p.podCIDR = cidr } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(p *Plugin) { p.log = l } }

// New returns a Plugin; the configuration is read on every call, so one
// that appears later (the node writes it at start) is picked up.
func New(opts ...Option) *Plugin {
	p := &Plugin{
		confDir:  "/etc/cni/net.d",
		binDirs:  []string{"/usr/lib/cni", "/opt/cni/bin"},
		cacheDir: "/var/lib/cni",
		log:      slog.Default(),
	}
	for _, o := range opts {
		o(p)
	}
	p.cni = libcni.NewCNIConfigWithCacheDir(p.binDirs, p.cacheDir, nil)
	lo, err := libcni.NetworkConfFromBytes([]byte(`{"cniVersion":"1.0.0","name":"cni-loopback","plugins":[{"type":"loopback"}]}`))
	if err != nil {
		panic(err) // a constant
	}
	p.loopback = lo
	return p
}

// SetPodCIDR sets the CIDR that fills ${POD_CIDR} (once the Node's
// spec.podCIDR is known).
func (p *Plugin) SetPodCIDR(cidr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.podCIDR = cidr
}

// Status is nil when a configuration can be loaded.
func (p *Plugin) Status() error {
	_, err := p.load()
	return err
}

// load returns the first pod network configuration in the directory.
func (p *Plugin) load() (*libcni.NetworkConfigList, error) {
	files, err := libcni.ConfFiles(p.confDir, []string{".conf", ".conflist", ".json"})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotReady, err)
	}
	sort.Strings(files)
	p.mu.RLock()
	cidr := p.podCIDR
	p.mu.RUnlock()
	var errs []error
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if bytes.Contains(data, []byte(PodCIDRPlaceholder)) {
			if cidr == "" {
				errs = append(errs, fmt.Errorf("%s needs the pod CIDR, which is not known yet", f))
				continue
			}
			data = bytes.ReplaceAll(data, []byte(PodCIDRPlaceholder), []byte(cidr))
		}
		list, err := parse(data)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f, err))
			continue
		}
		if onlyLoopback(list) {
			continue // lo is brought up separately
		}
		return list, nil
	}
	return nil, fmt.Errorf("%w: no network configuration in %s %v", ErrNotReady, p.confDir, errors.Join(errs...))
}

// parse reads a .conflist or a single-plugin .conf.
func parse(data []byte) (*libcni.NetworkConfigList, error) {
	list, err := libcni.NetworkConfFromBytes(data)
	if err != nil {
		return nil, err
	}
	if len(list.Plugins) > 0 {
		return list, nil
	}
	single, err := libcni.NetworkPluginConfFromBytes(data)
	if err != nil {
		return nil, err
	}
	return libcni.ConfListFromConf(single)
}

func onlyLoopback(list *libcni.NetworkConfigList) bool {
	for _, pl := range list.Plugins {
		if pl.Network.Type != "loopback" {
			return false
		}
	}
	return true
}

func runtimeConf(pod *PodNetwork, ifName string) *libcni.RuntimeConf {
	rt := &libcni.RuntimeConf{
		ContainerID: pod.SandboxID,
		NetNS:       pod.NetNS,
		IfName:      ifName,
		Args: [][2]string{
			{"IgnoreUnknown", "1"},
			{"K8S_POD_NAMESPACE", pod.Namespace},
			{"K8S_POD_NAME", pod.Name},
			{"K8S_POD_INFRA_CONTAINER_ID", pod.SandboxID},
			{"K8S_POD_UID", pod.UID},
		},
	}
	if len(pod.PortMappings) > 0 && ifName != "lo" {
		rt.CapabilityArgs = map[string]any{"portMappings": pod.PortMappings}
	}
	return rt
}

// SetUpPod runs ADD for lo and for the pod network.
func (p *Plugin) SetUpPod(ctx context.Context, pod *PodNetwork) ([]string, error) {
	list, err := p.load()
	if err != nil {
		return nil, err
	}
	if _, err := p.cni.AddNetworkList(ctx, p.loopback, runtimeConf(pod, "lo")); err != nil {
		return nil, fmt.Errorf("cni loopback ADD: %w", err)
	}
	res, err := p.cni.AddNetworkList(ctx, list, runtimeConf(pod, "eth0"))
	if err != nil {
		return nil, fmt.Errorf("cni %s ADD: %w", list.Name, err)
	}
	r, err := types100.NewResultFromResult(res)
	if err != nil {
		return nil, fmt.Errorf("cni %s ADD result: %w", list.Name, err)
	}
	var v4, v6 []string
	for _, ip := range r.IPs {
		if ip.Address.IP.To4() != nil {
			v4 = append(v4, ip.Address.IP.String())
		} else if ip.Address.IP != nil {
			v6 = append(v6, ip.Address.IP.String())
		}
	}
	ips := append(v4, v6...)
	if len(ips) == 0 {
		return nil, ErrNoIP
	}
	p.log.Debug("cni ADD", "pod", pod.Namespace+"/"+pod.Name, "network", list.Name, "ips", ips)
	return ips, nil
}

// TearDownPod runs DEL for the pod network (lo goes with the namespace).
func (p *Plugin) TearDownPod(ctx context.Context, pod *PodNetwork) error {
	list, err := p.load()
	if err != nil {
		// Without a configuration there is nothing DEL could reach.
		p.log.Warn("cni DEL skipped", "pod", pod.Namespace+"/"+pod.Name, "err", err)
		return nil
	}
	rt := runtimeConf(pod, "eth0")
	if pod.NetNS != "" {
		if _, err := os.Stat(pod.NetNS); err != nil {
			rt.NetNS = "" // gone already: plugins release the IP without entering it
		}
	}
	if err := p.cni.DelNetworkList(ctx, list, rt); err != nil {
		return fmt.Errorf("cni %s DEL: %w", list.Name, err)
	}
	return nil
}
