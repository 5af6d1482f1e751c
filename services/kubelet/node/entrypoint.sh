#!/bin/bash
# Entrypoint of podline/node:dev, run under tini (PID 1, reaps orphaned shims).
#
# 1. renders /etc/cni/net.d/10-podline.conflist from the template with the
#    node's pod subnet ($POD_CIDR, e.g. 10.244.1.0/24);
# 2. starts containerd (socket /run/containerd/containerd.sock), waits until
#    it answers, imports the pause image into namespace k8s.io unless it is
#    there, and touches /run/podline-node.ready;
#    With $POD_ROUTES ("10.244.1.0/24=worker-1 ..."), keeps a route to each
#    other node's pod subnet through that node, re-resolved every 5 s (a
#    node that is not up yet, or restarts with a new address, is picked up);
# 3. starts the CRI runtime the kubelet speaks to, by $NODE_RUNTIME:
#    podline (the default): /usr/local/bin/podline-cri on
#    /run/podline/cri.sock, which calls CNI itself (containerd's CRI plugin
#    is disabled then);
#    containerd: containerd's own CRI plugin on
#    /run/containerd/containerd.sock;
#    writes /etc/crictl.yaml for that socket and waits until it answers;
# 4. refuses untranslated traffic to the Service range ($SERVICE_CIDR,
#    table ip podline-node);
# 5. starts /usr/local/bin/kubelet with --container-runtime-endpoint and this
#    script's arguments, and the node proxy (/usr/local/bin/proxy), when
#    those binaries are in the image; otherwise only the runtime runs.
# When containerd, the CRI runtime, the kubelet or the proxy exits, the others are stopped and the
# container exits with that status, so docker's restart policy restarts the
# node as a whole. SIGTERM/SIGINT stop both.
set -euo pipefail

log() { echo "podline-node: $*" >&2; }

: "${POD_CIDR:?POD_CIDR must be set to the pod subnet of this node, e.g. 10.244.1.0/24}"
case "$POD_CIDR" in
*[!0-9./]* | "" | */*/*) log "POD_CIDR=$POD_CIDR is not an IPv4 CIDR"; exit 2 ;;
*/*) ;;
*) log "POD_CIDR=$POD_CIDR is not an IPv4 CIDR"; exit 2 ;;
esac

CNI_CONF_DIR=/etc/cni/net.d
mkdir -p "$CNI_CONF_DIR"
sed "s|\${POD_CIDR}|$POD_CIDR|g" /etc/cni/podline.conflist.tmpl >"$CNI_CONF_DIR/10-podline.conflist.tmp"
mv "$CNI_CONF_DIR/10-podline.conflist.tmp" "$CNI_CONF_DIR/10-podline.conflist"
log "CNI network podline on $POD_CIDR ($CNI_CONF_DIR/10-podline.conflist)"

# The CNI plugins (bridge ipMasq, portmap) program iptables in this
# container's network namespace; use whichever backend the kernel offers.
if ! iptables -t nat -S >/dev/null 2>&1 && iptables-legacy -t nat -S >/dev/null 2>&1; then
	update-alternatives --quiet --set iptables /usr/sbin/iptables-legacy
	update-alternatives --quiet --set ip6tables /usr/sbin/ip6tables-legacy
	log "iptables: using the legacy backend"
fi

# Docker mounts /proc/sys read-only unless run with systempaths=unconfined,
# which compose v1 cannot ask for; CNI plugins and runc write sysctls there.
if awk '$2 == "/proc/sys" && $4 ~ /(^|,)ro(,|$)/ { ro = 1 } END { exit !ro }' /proc/mounts; then
	mount -o remount,rw /proc/sys 2>/dev/null && log "remounted /proc/sys read-write" ||
		log "warning: /proc/sys is read-only"
fi

# Mounts made for pods (network namespaces, volumes) must propagate.
mount --make-rshared / 2>/dev/null || log "warning: cannot make / rshared"

case "$(stat -f -c %T /var/lib/containerd 2>/dev/null)" in
overlayfs | fuseblk | fuse) log "warning: /var/lib/containerd is on $(stat -f -c %T /var/lib/containerd); mount a volume there or the overlayfs snapshotter fails" ;;
esac

# Pod-to-pod traffic between nodes: one route per other node's subnet, as a
# flat-network CNI daemon would program. Runs until the container stops.
keep_routes() {
	local subnet host ip
	while :; do
		for route in $POD_ROUTES; do
			subnet=${route%%=*} host=${route#*=}
			ip=$(getent hosts "$host" | awk '{print $1; exit}') || true
			[ -n "$ip" ] && ip route replace "$subnet" via "$ip" 2>/dev/null || true
		done
		sleep 5
	done
}

pids=()
helpers=()
signalled=0
stop() {
	trap - TERM INT
	for pid in "${helpers[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
}
trap 'signalled=1; stop' TERM INT

NODE_RUNTIME=${NODE_RUNTIME:-podline}
CONTAINERD_CONFIG=/etc/containerd/config.toml
case "$NODE_RUNTIME" in
containerd) CRI_SOCKET=/run/containerd/containerd.sock ;;
podline)
	CRI_SOCKET=/run/podline/cri.sock
	[ -x /usr/local/bin/podline-cri ] || { log "NODE_RUNTIME=podline but /usr/local/bin/podline-cri is not in this image"; exit 2; }
	# containerd's own CRI plugin must not take podline-cri's containers.
	sed 's|^disabled_plugins = \[\]|disabled_plugins = ["io.containerd.grpc.v1.cri"]|' \
		/etc/containerd/config.toml >/run/containerd-config.toml
	CONTAINERD_CONFIG=/run/containerd-config.toml
	;;
*) log "NODE_RUNTIME=$NODE_RUNTIME: want containerd or podline"; exit 2 ;;
esac
CRI_ENDPOINT=unix://$CRI_SOCKET
printf 'runtime-endpoint: %s\nimage-endpoint: %s\ntimeout: 10\n' "$CRI_ENDPOINT" "$CRI_ENDPOINT" >/etc/crictl.yaml

containerd --config "$CONTAINERD_CONFIG" &
pids+=("$!")
for _ in $(seq 150); do
	if ctr --timeout 2s version >/dev/null 2>&1; then break; fi
	if ! kill -0 "${pids[0]}" 2>/dev/null; then
		wait "${pids[0]}" || exit $?
		exit 1
	fi
	sleep 0.2
done
ctr --timeout 2s version >/dev/null || { log "containerd did not start"; stop; exit 1; }
log "containerd is ready on /run/containerd/containerd.sock"

# Preload the pause image (docker.io/podline/pause:3.10) into the runtime's
# containerd namespace: k8s.io for containerd's CRI plugin, podline for
# podline-cri.
pause_ref=docker.io/podline/pause:3.10
case "$NODE_RUNTIME" in podline) pause_ns=podline ;; *) pause_ns=k8s.io ;; esac
if ! ctr -n "$pause_ns" images ls -q | grep -qx "$pause_ref"; then
	ctr -n "$pause_ns" images import /usr/share/podline/images/pause.tar >/dev/null
	log "imported $pause_ref into namespace $pause_ns"
fi

if [ "$NODE_RUNTIME" = podline ]; then
	mkdir -p /run/podline
	/usr/local/bin/podline-cri --listen "$CRI_SOCKET" --containerd /run/containerd/containerd.sock \
		--pod-cidr "$POD_CIDR" ${OTEL_EXPORTER_OTLP_CERTIFICATE:+--otlp-endpoint=https://jaeger:4317} &
	pids+=("$!")
	log "podline-cri started (pid $!)"
fi

# Wait until the runtime answers CRI: crictl when the image has it, else
# until its socket exists.
cri_up() {
	if command -v crictl >/dev/null 2>&1; then
		crictl --timeout 2s version >/dev/null 2>&1
	else
		[ -S "$CRI_SOCKET" ]
	fi
}
for _ in $(seq 300); do
	cri_up && break
	for pid in "${pids[@]}"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			log "the runtime (pid $pid) exited before $CRI_ENDPOINT answered"
			stop
			exit 1
		fi
	done
	sleep 0.2
done
cri_up || { log "no CRI runtime answers on $CRI_ENDPOINT"; stop; exit 1; }
log "CRI runtime $NODE_RUNTIME is ready on $CRI_ENDPOINT"
touch /run/podline-node.ready

if [ -n "${POD_ROUTES:-}" ]; then
	keep_routes &
	helpers+=("$!")
	log "routing pod subnets of other nodes: $POD_ROUTES"
fi

# Service addresses are virtual: the node proxy translates them. One that
# is still untranslated after NAT (a ClusterIP no Service has, or one the
# proxy has not programmed yet) is refused here, so it never follows the
# default route off this machine.
SERVICE_CIDR=${SERVICE_CIDR:-10.96.0.0/12}
if command -v nft >/dev/null 2>&1; then
	nft -f - <<EOF
table ip podline-node
delete table ip podline-node
table ip podline-node {
	chain forward {
		type filter hook forward priority filter + 10; policy accept;
		ip daddr $SERVICE_CIDR ct status != dnat meta l4proto tcp reject with tcp reset
		ip daddr $SERVICE_CIDR ct status != dnat reject
	}
	chain output {
		type filter hook output priority filter + 10; policy accept;
		ip daddr $SERVICE_CIDR ct status != dnat meta l4proto tcp reject with tcp reset
		ip daddr $SERVICE_CIDR ct status != dnat reject
	}
}
EOF
	log "untranslated traffic to $SERVICE_CIDR is refused (table ip podline-node)"
else
	log "warning: no nft in this image; untranslated Service traffic is not refused"
fi

if [ -x /usr/local/bin/kubelet ]; then
	/usr/local/bin/kubelet --container-runtime-endpoint "$CRI_ENDPOINT" "$@" &
	pids+=("$!")
	log "kubelet started (pid $!)"
	# The node proxy is an API client with the kubelet's credentials, as
	# kube-proxy runs with a node's.
	if [ -x /usr/local/bin/proxy ]; then
		/usr/local/bin/proxy --kubeconfig=/etc/kubernetes/kubelet.conf --apiserver=apiserver:6444 \
			--watch-endpoint=watchcache:6444 --hostname-override="$(hostname)" \
			--cluster-cidr=10.244.0.0/16 --otlp-endpoint=https://jaeger:4317 &
		pids+=("$!")
		log "node proxy started (pid $!)"
	fi
else
	log "no /usr/local/bin/kubelet in this image: running the runtime only"
fi

# Whichever exits first (or a signal) ends the node.
status=0
wait -n "${pids[@]}" || status=$?
stop
wait || true
if [ "$signalled" = 1 ]; then status=0; fi
log "exiting with status $status"
exit "$status"
