#!/bin/bash
# smoke.sh: end-to-end check that a podline node container can run a pod.
#
# By hand, with nothing but docker and the images of `make images`, it does
# what the kubelet will do for one pod:
#   1. a user-defined network with the registry (podline/registry:3.1.2,
#      network alias registry.podline, TLS only with the serving pair
#      $PKI_DIR/registry/server.{crt,key}) and the demo image pushed into it
#      through a port published on 127.0.0.1;
#   2. a node container (podline/node:dev) started with the PLATFORM.md
#      settings: cap_add ALL, cap_drop SYS_RESOURCE, seccomp/apparmor/
#      systempaths unconfined, /sys/fs/cgroup bind rw, a named volume at
#      /var/lib/containerd, tmpfs at /run, and the cluster CA
#      ($PKI_DIR/ca.crt) at /etc/kubernetes/pki/ca.crt;
#   3. inside it: check the preloaded podline/pause:3.10 and import it again
#      from `docker save`, check that a pull without the CA is refused, pull
#      registry.podline:5000/demo/web:1.0 over TLS verified with the CA
#      (hosts.toml),
#      create a network namespace, CNI ADD (loopback, then the podline
#      bridge/host-local/portmap conflist) with cnitool, run pause and web in
#      that namespace, and fetch http://<pod ip>:8080/ from the node;
#   4. a shell inside the web container (busybox), and the portmap hostPort
#      reached from the host at <node ip>:18080.
# PKI_DIR is the directory of `make certs` (.podline/pki of the repository
# by default; `make node-smoke` makes sure it is complete).
# Everything it creates is named podline-smoke-<pid>-* and removed on exit,
# also on failure or timeout (SMOKE_TIMEOUT seconds, 300 by default). Traffic
# goes only to the containers and network namespace it creates.
set -euo pipefail

if [ -z "${PODLINE_SMOKE_TIMED:-}" ]; then
	export PODLINE_SMOKE_TIMED=1
	exec timeout -s TERM -k 60 "${SMOKE_TIMEOUT:-300}" "$0" "$@"
fi

NODE_IMAGE=${NODE_IMAGE:-podline/node:dev}
PAUSE_IMAGE=${PAUSE_IMAGE:-podline/pause:3.10}
WEB_IMAGE=${WEB_IMAGE:-registry.podline:5000/demo/web:1.0}
REGISTRY_IMAGE=${REGISTRY_IMAGE:-podline/registry:3.1.2}
POD_CIDR=${POD_CIDR:-10.244.1.0/24}
PKI_DIR=${PKI_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)/.podline/pki}
WEB_PORT=8080
HOST_PORT=18080

id=podline-smoke-$$
net=$id
node=$id-node
reg=$id-registry
node_vol=$id-containerd
reg_vol=$id-registry
cgroup_parent=/$id
pod=smoke-web-pod
push_ref=

step() { echo "--- $*" >&2; }
fail() {
	echo "FAIL: $*" >&2
	if docker inspect "$node" >/dev/null 2>&1; then
		echo "--- node state" >&2
		timeout 20 docker exec "$node" sh -c 'ctr tasks ls; ctr containers ls; ip -br addr;
			for f in /run/smoke-*.log; do [ -f "$f" ] && { echo "== $f"; cat "$f"; }; done' >&2
		docker logs --tail 30 "$node" >&2
	fi
	exit 1
}
# in NODE CMD...: run CMD in the node container, bounded in time.
in_node() { timeout 60 docker exec "$node" "$@"; }

cleanup() {
	local rc=$?
	trap - EXIT TERM INT
	set +e
	step "cleanup"
	if docker inspect "$node" >/dev/null 2>&1; then
		# Stop the pod the way the kubelet would, so runc removes its
		# cgroups from the host's hierarchy, then remove the parent cgroup.
		for c in smoke-web smoke-pause; do
			timeout 20 docker exec "$node" ctr tasks kill -s SIGKILL "$c" >/dev/null 2>&1
		done
		sleep 1
		for c in smoke-web smoke-pause; do
			timeout 20 docker exec "$node" ctr tasks delete -f "$c" >/dev/null 2>&1
			timeout 20 docker exec "$node" ctr containers delete "$c" >/dev/null 2>&1
		done
		timeout 20 docker exec "$node" cnitool del podline /run/netns/smoke >/dev/null 2>&1
		timeout 20 docker exec -e CNI_IFNAME=lo "$node" cnitool del loopback /run/netns/smoke >/dev/null 2>&1
		timeout 20 docker exec "$node" ip netns del smoke >/dev/null 2>&1
		timeout 20 docker exec "$node" sh -c \
			"find /sys/fs/cgroup/*$cgroup_parent -depth -type d -exec rmdir {} + 2>/dev/null"
		docker logs "$node" >"${SMOKE_LOG:-/dev/null}" 2>&1
		docker rm -f "$node" >/dev/null
	fi
	docker rm -f "$reg" >/dev/null 2>&1
	[ -n "$push_ref" ] && docker rmi "$push_ref" >/dev/null 2>&1
	docker network rm "$net" >/dev/null 2>&1
	docker volume rm "$node_vol" "$reg_vol" >/dev/null 2>&1
	left=$(docker ps -aq --filter "name=$id"; docker volume ls -q --filter "name=$id"; docker network ls -q --filter "name=$id")
	[ -z "$left" ] || echo "warning: left behind: $left" >&2
	ls -d /sys/fs/cgroup/*"$cgroup_parent" 2>/dev/null | sed 's/^/warning: cgroup left behind: /' >&2
	if [ "$rc" = 0 ]; then echo "PASS" >&2; else echo "FAIL (status $rc)" >&2; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'echo "interrupted or timed out" >&2; exit 124' TERM INT

start=$(date +%s)
for image in "$NODE_IMAGE" "$PAUSE_IMAGE" "$WEB_IMAGE" "$REGISTRY_IMAGE"; do
	docker image inspect "$image" >/dev/null 2>&1 || fail "image $image is missing: run make images"
done
for f in ca.crt registry/server.crt registry/server.key; do
	[ -f "$PKI_DIR/$f" ] || fail "$PKI_DIR/$f is missing: run make certs"
done

step "network $net, registry $reg (alias registry.podline, TLS)"
docker network create "$net" >/dev/null
docker run -d --name "$reg" --network "$net" --network-alias registry.podline \
	-p 127.0.0.1::5000 -v "$reg_vol:/var/lib/registry" \
	-v "$PKI_DIR/registry:/etc/distribution/pki:ro" "$REGISTRY_IMAGE" >/dev/null
reg_port=$(docker port "$reg" 5000/tcp | head -n 1 | sed 's/.*://')
reg_url=https://127.0.0.1:$reg_port/v2/
for _ in $(seq 50); do
	curl -fsS -m 1 --cacert "$PKI_DIR/ca.crt" -o /dev/null "$reg_url" 2>/dev/null && break
	sleep 0.2
done
curl -fsS -m 2 --cacert "$PKI_DIR/ca.crt" -o /dev/null "$reg_url" || fail "registry does not answer on $reg_url"

# Docker takes 127.0.0.0/8 as an insecure registry: it speaks TLS to it
# without verifying the certificate, so the host's Docker needs no CA.
step "push $WEB_IMAGE through 127.0.0.1:$reg_port"
push_ref=127.0.0.1:$reg_port/demo/web:1.0
docker tag "$WEB_IMAGE" "$push_ref"
timeout 120 docker push "$push_ref" >/dev/null

# The script plays the kubelet itself: /dev/null over the image's kubelet
# (not executable) makes the entrypoint run containerd alone.
step "node $node ($NODE_IMAGE, POD_CIDR=$POD_CIDR)"
docker run -d --name "$node" --hostname "$node" --network "$net" \
	-v /dev/null:/usr/local/bin/kubelet:ro \
	--cap-add ALL --cap-drop SYS_RESOURCE \
	--security-opt seccomp=unconfined --security-opt apparmor=unconfined \
	--security-opt systempaths=unconfined \
	-v /sys/fs/cgroup:/sys/fs/cgroup:rw -v "$node_vol:/var/lib/containerd" --tmpfs /run \
	-v "$PKI_DIR/ca.crt:/etc/kubernetes/pki/ca.crt:ro" \
	-e POD_CIDR="$POD_CIDR" "$NODE_IMAGE" >/dev/null
for _ in $(seq 100); do
	in_node test -f /run/podline-node.ready 2>/dev/null && break
	docker inspect -f '{{.State.Running}}' "$node" | grep -q true || { docker logs "$node" >&2; fail "node exited"; }
	sleep 0.3
done
in_node test -f /run/podline-node.ready || { docker logs "$node" >&2; fail "node is not ready"; }
in_node cat /etc/cni/net.d/10-podline.conflist | grep -q "\"subnet\": \"$POD_CIDR\"" ||
	fail "conflist does not carry POD_CIDR"

pause_ref=docker.io/$PAUSE_IMAGE
in_node ctr -n k8s.io images ls -q | grep -qx "$pause_ref" || fail "the node did not preload $pause_ref"

step "import $PAUSE_IMAGE again (docker save | ctr images import)"
docker save "$PAUSE_IMAGE" | timeout 60 docker exec -i "$node" ctr -n k8s.io images import - >/dev/null
in_node ctr -n k8s.io images ls -q | grep -qx "$pause_ref" || fail "$pause_ref not in containerd"

step "pull $WEB_IMAGE without the CA: refused"
in_node sh -c 'd=/tmp/no-ca/registry.podline:5000 && mkdir -p $d &&
	grep -v "^ca " /etc/containerd/certs.d/registry.podline:5000/hosts.toml > $d/hosts.toml'
out=$(in_node ctr -n k8s.io images pull --hosts-dir /tmp/no-ca "$WEB_IMAGE" 2>&1) &&
	fail "pulled without the cluster CA"
echo "$out" | grep -q "certificate signed by unknown authority" || fail "pull without the CA: $out"

step "pull $WEB_IMAGE (TLS, verified with the cluster CA, via /etc/containerd/certs.d)"
in_node ctr -n k8s.io images pull --hosts-dir /etc/containerd/certs.d "$WEB_IMAGE" >/dev/null
in_node ctr -n k8s.io images ls -q | grep -qx "$WEB_IMAGE" || fail "$WEB_IMAGE not pulled"

step "network namespace and CNI ADD"
in_node ip netns add smoke
docker exec -e CNI_IFNAME=lo "$node" timeout 30 cnitool add loopback /run/netns/smoke >/dev/null
docker exec -e "CAP_ARGS={\"portMappings\":[{\"hostPort\":$HOST_PORT,\"containerPort\":$WEB_PORT,\"protocol\":\"tcp\"}]}" \
	-e "CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=$pod" \
	"$node" timeout 30 cnitool add podline /run/netns/smoke | grep -E '"(address|gateway)"' | sed 's/^ */    /' >&2
pod_ip=$(in_node ip netns exec smoke ip -4 -o addr show dev eth0 | awk '{print $4}' | cut -d/ -f1)
[ -n "$pod_ip" ] || fail "no IPv4 address on eth0 in the pod namespace"
echo "pod IP $pod_ip" >&2

step "run pause and web in the pod namespace"
in_node ctr -n k8s.io run -d --cgroup "$cgroup_parent/smoke-pause" \
	--log-uri file:///run/smoke-pause.log \
	--with-ns network:/run/netns/smoke "$pause_ref" smoke-pause >/dev/null
in_node ctr -n k8s.io run -d --cgroup "$cgroup_parent/smoke-web" \
	--log-uri file:///run/smoke-web.log \
	--with-ns network:/run/netns/smoke --hostname "$pod" --env POD_NAME="$pod" \
	"$WEB_IMAGE" smoke-web >/dev/null

step "GET http://$pod_ip:$WEB_PORT/ from the node's namespace"
body=
for _ in $(seq 50); do
	# (timeout, not wget -T: Debian's busybox 1.35 wget crashes with -T)
	body=$(in_node timeout 5 busybox wget -q -O- "http://$pod_ip:$WEB_PORT/" 2>/dev/null) && break
	sleep 0.2
done
echo "    $body" >&2
case "$body" in *"$pod"*"$pod_ip"*) ;; *) fail "unexpected answer: $body" ;; esac
[ "$(in_node timeout 5 busybox wget -q -O- "http://$pod_ip:$WEB_PORT/healthz")" = ok ] || fail "/healthz"

step "shell in the web container (ctr tasks exec)"
out=$(in_node ctr -n k8s.io tasks exec --exec-id smoke-sh smoke-web \
	sh -c 'ls /bin/sh && ls -l /proc/1/exe && wget -q -O- http://127.0.0.1:8080/healthz')
echo "$out" | sed 's/^/    /' >&2
echo "$out" | grep -q '^ok$' || fail "exec in the web container"
in_node ctr -n k8s.io tasks ls | grep -E 'smoke-(pause|web) .*RUNNING' | sed 's/^/    /' >&2
[ "$(in_node ctr -n k8s.io tasks ls | grep -cE 'smoke-(pause|web) .*RUNNING')" = 2 ] || fail "pause and web not both running"

step "hostPort $HOST_PORT (portmap) from the host"
node_ip=$(docker inspect -f "{{(index .NetworkSettings.Networks \"$net\").IPAddress}}" "$node")
body=$(curl -fsS -m 5 "http://$node_ip:$HOST_PORT/") || fail "no answer on $node_ip:$HOST_PORT"
echo "    $body" >&2
case "$body" in *"$pod"*) ;; *) fail "unexpected answer on the hostPort: $body" ;; esac

step "SIGTERM stops web and pause with status 0"
for c in smoke-web smoke-pause; do
	in_node ctr -n k8s.io tasks kill -s SIGTERM "$c"
	for _ in $(seq 50); do
		in_node ctr -n k8s.io tasks ls | grep -qE "^$c .*STOPPED" && break
		sleep 0.2
	done
	status=$(in_node ctr -n k8s.io tasks delete "$c" 2>&1) || fail "delete $c: $status"
	case "$status" in *"non-zero exit code"*) fail "$c: $status" ;; esac
	in_node ctr -n k8s.io containers delete "$c"
done
grep -q "msg=stopped" <(in_node cat /run/smoke-web.log) || fail "web did not shut down cleanly"

echo "smoke test passed in $(($(date +%s) - start))s" >&2
