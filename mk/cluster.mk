# The cluster under docker compose (compose.yaml): images, start, stop.
#
#   make up               build binaries and images (nothing is pulled),
#                         `make certs`, start compose, wait for the
#                         apiserver's /readyz, print how to reach it
#   make down             stop and remove the containers; etcd data is kept
#   make clean            down, remove the volumes and .podline (certificates,
#                         kubeconfigs)
#   make apiserver-image  podline/apiserver:dev, FROM scratch
#   make jaeger-image     the upstream jaegertracing/jaeger image if it can be
#                         pulled, else podline/jaeger:v1.76.0, FROM scratch (otel/);
#                         either runs otel/jaeger.yaml (TLS only)
#
# Host ports: PODLINE_APISERVER_PORT (6443), PODLINE_JAEGER_PORT (16686),
# PODLINE_REGISTRY_PORT (5000), e.g. `make up PODLINE_APISERVER_PORT=7443`
# (with a fresh `make certs`: the kubeconfig names the port).
#
# Works with `docker compose` (v2) or `docker-compose` (v1), whichever exists.
# Each image is built from a staged context under .cache/images/<name>/ and
# rebuilt only when that context changed (IMG_build, mk/images.mk).

# Stable names: networks podline_etcd and podline_cluster, volumes
# podline_etcd-N-data, containers podline_<service>_1 (v1) or
# podline-<service>-1 (v2).
export COMPOSE_PROJECT_NAME := podline

COMPOSE ?= $(shell if docker compose version >/dev/null 2>&1; then echo docker compose; \
	elif command -v docker-compose >/dev/null 2>&1; then echo docker-compose; fi)

CLUSTER_APISERVER_IMAGE := podline/apiserver:dev
CLUSTER_JAEGER_IMAGE    := podline/jaeger:v1.76.0
# Host ports (loopback only); compose.yaml reads the same variables.
export PODLINE_APISERVER_PORT ?= 6443
export PODLINE_JAEGER_PORT    ?= 16686
export PODLINE_REGISTRY_PORT  ?= 5000
# The nodes' CRI runtime: podline (podline-cri) or containerd (its CRI plugin).
export PODLINE_NODE_RUNTIME   ?= podline
CLUSTER_READYZ          := https://127.0.0.1:$(PODLINE_APISERVER_PORT)/readyz
# Jaeger: the upstream image when this machine can pull it (the release of
# the Go module podline builds otherwise), decided once and remembered in
# $(CLUSTER_JAEGER_CHOICE); JAEGER_PULL=0 skips the attempt.
JAEGER_UPSTREAM_IMAGE   ?= jaegertracing/jaeger:2.13.0
JAEGER_PULL             ?= 1
CLUSTER_JAEGER_CHOICE   := $(CURDIR)/.cache/images/jaeger.image
CLUSTER_READY_TIMEOUT   ?= 180

.PHONY: up down clean apiserver-image jaeger-image jaeger-local-image cluster-compose

cluster-compose:
	@if [ -z "$(COMPOSE)" ]; then echo "neither 'docker compose' nor 'docker-compose' is installed" >&2; exit 1; fi

# `go build` is incremental, so the binary is rebuilt on every run (cheap
# when nothing changed) and IMG_build leaves an unchanged image alone.
apiserver-image:
	@set -e; ctx=$(IMG_CACHE)/apiserver; mkdir -p $$ctx; \
	cd $(CURDIR)/services/apiserver && CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' \
		-o $$ctx/apiserver ./cmd/apiserver; \
	cp $(CURDIR)/services/apiserver/Dockerfile $$ctx/Dockerfile
	$(call IMG_build,$(CLUSTER_APISERVER_IMAGE),$(IMG_CACHE)/apiserver)

jaeger-image:
	@mkdir -p $(dir $(CLUSTER_JAEGER_CHOICE)); \
	if [ ! -s $(CLUSTER_JAEGER_CHOICE) ]; then \
		if [ "$(JAEGER_PULL)" = 1 ] && timeout 60 docker pull -q $(JAEGER_UPSTREAM_IMAGE) >/dev/null 2>&1; then \
			echo "$(JAEGER_UPSTREAM_IMAGE)" > $(CLUSTER_JAEGER_CHOICE); \
		else \
			echo "$(CLUSTER_JAEGER_IMAGE)" > $(CLUSTER_JAEGER_CHOICE); \
		fi; \
	fi; \
	echo "jaeger: $$(cat $(CLUSTER_JAEGER_CHOICE))"
	@if [ "$$(cat $(CLUSTER_JAEGER_CHOICE))" = "$(CLUSTER_JAEGER_IMAGE)" ]; then \
		$(MAKE) --no-print-directory jaeger-local-image; fi

jaeger-local-image: bin/jaeger
	@set -e; ctx=$(IMG_CACHE)/jaeger; rm -rf $$ctx; mkdir -p $$ctx; \
	cp $(CURDIR)/otel/Dockerfile $$ctx/Dockerfile; \
	$(call IMG_ln,$(CURDIR)/bin/jaeger,$$ctx/jaeger)
	$(call IMG_build,$(CLUSTER_JAEGER_IMAGE),$(IMG_CACHE)/jaeger)

# In order: the node image takes bin/kubelet, bin/proxy, bin/podline-cri
# and bin/crictl in, and push-demo fills the
# registry's volume before the registry container starts.
CLUSTER_IMAGES := etcd-image apiserver-image controller-manager-image scheduler-image jaeger-image \
	watchcache-image nats-image kubelet proxy podline-cri bin/crictl node-image registry-image coredns-image push-demo
CLUSTER_NODES := control-plane worker-1 worker-2
KUBECTL := $(CURDIR)/bin/kubectl --kubeconfig $(CURDIR)/.podline/kubeconfig

up: cluster-compose certs bin/kubectl kubectl-birth $(CLUSTER_IMAGES)
	@set -e; start=$$(date +%s); \
	export PODLINE_JAEGER_IMAGE=$$(cat $(CLUSTER_JAEGER_CHOICE)); \
	$(COMPOSE) up -d --remove-orphans; \
	echo "waiting for $(CLUSTER_READYZ) (up to $(CLUSTER_READY_TIMEOUT)s)"; \
	until [ "$$(curl -s -m 3 --cacert $(CERTS_DIR)/ca.crt $(CLUSTER_READYZ) 2>/dev/null)" = "ok" ]; do \
		if [ $$(( $$(date +%s) - start )) -ge $(CLUSTER_READY_TIMEOUT) ]; then \
			echo "apiserver not ready after $(CLUSTER_READY_TIMEOUT)s" >&2; \
			$(COMPOSE) ps >&2; $(COMPOSE) logs --tail=30 apiserver >&2; exit 1; \
		fi; \
		sleep 1; \
	done; \
	echo "apiserver ready in $$(( $$(date +%s) - start ))s; waiting for nodes $(CLUSTER_NODES) to be Ready"; \
	want="$$(for n in $(CLUSTER_NODES); do echo "$$n=True"; done | sort | tr '\n' ' ')"; \
	until [ "$$($(KUBECTL) get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>/dev/null | sort | tr '\n' ' ')" = "$$want" ]; do \
		if [ $$(( $$(date +%s) - start )) -ge $(CLUSTER_READY_TIMEOUT) ]; then \
			echo "nodes not Ready after $(CLUSTER_READY_TIMEOUT)s" >&2; \
			$(KUBECTL) get nodes >&2 || true; $(COMPOSE) ps >&2; exit 1; \
		fi; \
		sleep 1; \
	done; \
	$(KUBECTL) label node control-plane node-role.kubernetes.io/control-plane= --overwrite >/dev/null; \
	echo "nodes Ready in $$(( $$(date +%s) - start ))s; deploying CoreDNS (kube-system/coredns, Service kube-dns 10.96.0.10)"; \
	$(KUBECTL) apply -f $(COREDNS_MANIFEST) >/dev/null; \
	until [ "$$($(KUBECTL) -n kube-system get deployment coredns -o jsonpath='{.status.readyReplicas}/{.spec.replicas}' 2>/dev/null)" = 2/2 ]; do \
		if [ $$(( $$(date +%s) - start )) -ge $$(( 2 * $(CLUSTER_READY_TIMEOUT) )) ]; then \
			echo "CoreDNS not ready after $$(( $$(date +%s) - start ))s" >&2; \
			$(KUBECTL) -n kube-system get pods -o wide >&2 || true; exit 1; \
		fi; \
		sleep 1; \
	done; \
	echo; \
	echo "podline is up: apiserver, nodes $(CLUSTER_NODES) and cluster DNS ready in $$(( $$(date +%s) - start ))s"; \
	echo "  kubeconfig: $(CURDIR)/.podline/kubeconfig"; \
	echo "  apiserver:  https://127.0.0.1:$(PODLINE_APISERVER_PORT)"; \
	echo "  jaeger:     https://127.0.0.1:$(PODLINE_JAEGER_PORT)  ($$(cat $(CLUSTER_JAEGER_CHOICE)); certificate of the cluster CA $(CERTS_DIR)/ca.crt)"; \
	echo "  traces:     curl --cacert $(CERTS_DIR)/ca.crt https://127.0.0.1:$(PODLINE_JAEGER_PORT)/api/services"; \
	echo "  try:        bin/kubectl --kubeconfig .podline/kubeconfig get nodes"; \
	echo "  birth:      KUBECONFIG=\$$PWD/.podline/kubeconfig PATH=\$$PWD/bin:\$$PATH kubectl birth deploy/<name>"

down: cluster-compose
	$(COMPOSE) down --remove-orphans

clean: cluster-compose
	$(COMPOSE) down -v --remove-orphans
	rm -rf $(CURDIR)/.podline
