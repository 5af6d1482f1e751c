# Images that run on nodes, and the node image itself. Nothing is pulled: the
# Debian base comes from debootstrap, everything else is FROM scratch or FROM
# that base, with static Go binaries built here.
#
#   make images      every image below (each rebuilt only when missing or its
#                    inputs changed)
#   make node-image  podline/node:dev (containerd, shim, runc, CNI plugins,
#                    and bin/kubelet when it exists)
#   make push-demo   push the demo web image (and IMG_PUSH_IMAGES) into the registry on
#                    127.0.0.1:5000 (or, when none answers there, into the
#                    registry volume through a temporary registry), over
#                    TLS; nodes pull it as registry.podline:5000/demo/web:1.0
#                    (and :1.1, the same image, for rollouts)
#   make node-smoke  run services/kubelet/node/smoke.sh against the images
#
# Images:
#   podline/debian-base:bookworm        debootstrap minbase, rebuilt when its package list changes
#   podline/node:dev                    FROM the base
#   podline/pause:3.10                  FROM scratch
#   registry.podline:5000/demo/web:1.0  FROM scratch (+ static busybox)
#   podline/registry:3.1.2              FROM scratch
#
# Cold times measured on 2 cores while other builds ran: containerd + shim
# 48 s download + 6 min build (ctr and cnitool add little), registry 41 s +
# 9.5 min, debian base (debootstrap, 121 packages) 7.7 min; the images
# themselves take seconds. Sizes: base 196 MB, node 280 MB, registry 56 MB,
# web 8 MB, pause 1.6 MB. A run with nothing to do takes about 8 s.
#
# Each image is built from a staged context under .cache/images/<name>/ and
# labelled with a hash of that context (dev.podline.inputs); an image whose
# label matches the staged context is left alone.

IMG_BASE     := podline/debian-base:bookworm
IMG_NODE     := podline/node:dev
IMG_PAUSE    := podline/pause:3.10
IMG_WEB      := registry.podline:5000/demo/web:1.0
IMG_REGISTRY := podline/registry:3.1.2
# The demo image is pushed under each tag: a second tag makes a rollout
# (kubectl set image / apply with a new image) possible without a second build.
IMG_WEB_TAGS := 1.0 1.1
# What push-demo pushes, as local-image=repository:tag in the registry; other
# mk files add theirs (and make push-demo depend on building them).
IMG_PUSH_IMAGES += $(foreach t,$(IMG_WEB_TAGS),$(IMG_WEB)=demo/web:$(t))

IMG_CACHE   := $(CURDIR)/.cache/images
IMG_DEBROOT := $(CURDIR)/.cache/debian-base
IMG_NODE_DIR := $(CURDIR)/services/kubelet/node
IMG_SRC_DIR  := $(CURDIR)/services/kubelet/images

# Third-party tools (GOWORK=off: they never join go.work) and podline's own
# image programs (built in the workspace, module podline.dev/services/kubelet).
IMG_GO_TOOL := GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags=-s\ -w
IMG_GO      := CGO_ENABLED=0 go build -trimpath -ldflags=-s\ -w

# Where `make push-demo` reaches the registry from the host.
IMG_PUSH_ADDR        ?= 127.0.0.1:$(or $(PODLINE_REGISTRY_PORT),5000)
IMG_REGISTRY_NAME    ?= podline-registry-push
IMG_REGISTRY_VOLUME  ?= podline-registry-data

# The Debian mirror of this machine's apt sources (deb822 or one-line form).
IMG_DEBIAN_MIRROR ?= $(shell { cat /etc/apt/sources.list.d/*.sources 2>/dev/null | \
	awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($$i ~ /\/debian\/?$$/) { print $$i; exit } }'; \
	cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | \
	awk '/^deb / { for (i = 2; i <= NF; i++) if ($$i ~ /\/debian\/?$$/) { print $$i; exit } }'; \
	echo http://deb.debian.org/debian; } | head -n 1)
IMG_DEBIAN_SUITE    := bookworm
IMG_DEBIAN_PACKAGES := ca-certificates,runc,containernetworking-plugins,iptables,iproute2,busybox-static,tini,mount,procps,nftables,conntrack

.PHONY: images node-image pause-image web-image registry-image debian-base push-demo node-smoke
images: debian-base node-image pause-image web-image registry-image
node-image: $(IMG_CACHE)/node.ok
pause-image: $(IMG_CACHE)/pause.ok
web-image: $(IMG_CACHE)/web.ok
registry-image: $(IMG_CACHE)/registry.ok

# --- binaries ---------------------------------------------------------------

# `go build -o` leaves an up-to-date binary untouched, so each recipe touches
# its target to record that it was checked against the newer go.mod.
bin/containerd: tools/containerd/go.mod
	@mkdir -p $(CURDIR)/bin
	cd $(CURDIR)/tools/containerd && $(IMG_GO_TOOL) -tags no_btrfs -o $(CURDIR)/$@ github.com/containerd/containerd/v2/cmd/containerd
	@touch $@

bin/containerd-shim-runc-v2: tools/containerd/go.mod
	@mkdir -p $(CURDIR)/bin
	cd $(CURDIR)/tools/containerd && $(IMG_GO_TOOL) -o $(CURDIR)/$@ github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2
	@touch $@

bin/ctr: tools/containerd/go.mod
	@mkdir -p $(CURDIR)/bin
	cd $(CURDIR)/tools/containerd && $(IMG_GO_TOOL) -tags no_btrfs -o $(CURDIR)/$@ github.com/containerd/containerd/v2/cmd/ctr
	@touch $@

bin/cnitool: tools/containerd/go.mod
	@mkdir -p $(CURDIR)/bin
	cd $(CURDIR)/tools/containerd && $(IMG_GO_TOOL) -o $(CURDIR)/$@ github.com/containernetworking/cni/cnitool
	@touch $@

# make test pulls from a real registry (the kubelet's image tests).
test: bin/registry

bin/registry: tools/registry/go.mod
	@mkdir -p $(CURDIR)/bin
	cd $(CURDIR)/tools/registry && $(IMG_GO_TOOL) -o $(CURDIR)/$@ github.com/distribution/distribution/v3/cmd/registry
	@touch $@

$(IMG_CACHE)/bin/pause: $(IMG_SRC_DIR)/pause/main.go services/kubelet/go.mod
	@mkdir -p $(@D)
	cd $(CURDIR)/services/kubelet && $(IMG_GO) -o $@ ./images/pause
	@touch $@

$(IMG_CACHE)/bin/web: $(IMG_SRC_DIR)/web/main.go services/kubelet/go.mod
	@mkdir -p $(@D)
	cd $(CURDIR)/services/kubelet && $(IMG_GO) -o $@ ./images/web
	@touch $@

# Debian's static busybox, for a shell in the demo image (`kubectl exec`).
# Fetched as a .deb into the cache, never committed.
$(IMG_CACHE)/busybox/bin/busybox:
	@command -v apt-get >/dev/null || { echo "apt-get is needed to fetch busybox-static" >&2; exit 1; }
	rm -rf $(IMG_CACHE)/busybox && mkdir -p $(IMG_CACHE)/busybox/deb
	cd $(IMG_CACHE)/busybox/deb && { apt-get download busybox-static || \
		{ apt-get update -qq && apt-get download busybox-static; }; }
	dpkg-deb -x $(IMG_CACHE)/busybox/deb/busybox-static_*.deb $(IMG_CACHE)/busybox/root
	mkdir -p $(@D) && cp $(IMG_CACHE)/busybox/root/bin/busybox $@

# --- the Debian base --------------------------------------------------------

# Built only when the image is missing or was built from another package list
# (its label dev.podline.packages). The debootstrap tree is kept under
# .cache/debian-base, so re-creating a deleted image is only an import.
debian-base:
	@if [ "$$(docker image inspect -f '{{index .Config.Labels "dev.podline.packages"}}' $(IMG_BASE) 2>/dev/null)" = "$(IMG_DEBIAN_PACKAGES)" ]; then \
		echo "$(IMG_BASE) exists"; exit 0; fi; \
	set -e; \
	if [ "$$(cat $(IMG_DEBROOT)/complete 2>/dev/null)" != "$(IMG_DEBIAN_PACKAGES)" ]; then \
		command -v debootstrap >/dev/null || apt-get install -y --no-install-recommends debootstrap || \
			{ apt-get update && apt-get install -y --no-install-recommends debootstrap; }; \
		rm -rf $(IMG_DEBROOT); mkdir -p $(IMG_DEBROOT); \
		echo "debootstrap $(IMG_DEBIAN_SUITE) from $(IMG_DEBIAN_MIRROR)"; \
		debootstrap --variant=minbase --include=$(IMG_DEBIAN_PACKAGES) \
			$(IMG_DEBIAN_SUITE) $(IMG_DEBROOT)/rootfs $(IMG_DEBIAN_MIRROR); \
		rm -rf $(IMG_DEBROOT)/rootfs/var/cache/apt/archives/*.deb \
			$(IMG_DEBROOT)/rootfs/var/lib/apt/lists/*; \
		echo "$(IMG_DEBIAN_PACKAGES)" > $(IMG_DEBROOT)/complete; \
	fi; \
	tar --numeric-owner -C $(IMG_DEBROOT)/rootfs -c . | docker import \
		-c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		-c 'CMD ["/bin/bash"]' -c 'LABEL dev.podline.packages=$(IMG_DEBIAN_PACKAGES)' - $(IMG_BASE) >/dev/null; \
	echo "imported $(IMG_BASE)"

# --- images -----------------------------------------------------------------

# IMG_ln: hard-link $(1) to $(2) (a copy when they are on different file systems).
IMG_ln = { ln -f $(1) $(2) 2>/dev/null || cp -f $(1) $(2); }

# IMG_build: build image $(1) from the staged context directory $(2) unless
# an image with that name already carries the context's hash.
define IMG_build
	@set -e; ctx=$(2); \
	want=$$(cd $$ctx && find . \( -type f -o -type l \) | LC_ALL=C sort | \
		while read -r f; do if [ -L "$$f" ]; then echo "$$f -> $$(readlink "$$f")"; \
		else echo "$$f $$(stat -c %a "$$f") $$(sha256sum < "$$f")"; fi; done | \
		sha256sum | cut -c1-32); \
	have=$$(docker image inspect -f '{{index .Config.Labels "dev.podline.inputs"}}' $(1) 2>/dev/null || true); \
	if [ "$$want" = "$$have" ]; then echo "$(1) is up to date"; else \
		echo "building $(1)"; \
		docker build -q --label dev.podline.inputs=$$want -t $(1) $$ctx >$$ctx.log 2>&1 || \
			{ cat $$ctx.log >&2; exit 1; }; \
		echo "built $(1) ($$(docker image inspect -f '{{.Size}}' $(1) | awk '{printf "%.1f MB", $$1/1e6}'))"; \
	fi
endef

# The stamps below are phony in effect: the context is restaged and hashed on
# every run (cheap), and IMG_build decides whether docker builds.
.PHONY: $(IMG_CACHE)/node.ok $(IMG_CACHE)/pause.ok $(IMG_CACHE)/web.ok $(IMG_CACHE)/registry.ok

# The node image. bin/kubelet, bin/proxy, bin/podline-cri and bin/crictl
# are optional: copied in when they exist. The
# pause image goes in as a `docker save` tarball that the node imports into
# containerd at start, so sandboxes never need a registry.
$(IMG_CACHE)/node.ok: debian-base $(IMG_CACHE)/pause.ok bin/containerd bin/containerd-shim-runc-v2 bin/ctr bin/cnitool
	@set -e; ctx=$(IMG_CACHE)/node; rm -rf $$ctx; mkdir -p $$ctx/bin; \
	cp -a $(IMG_NODE_DIR)/Dockerfile $(IMG_NODE_DIR)/entrypoint.sh $(IMG_NODE_DIR)/config.toml \
		$(IMG_NODE_DIR)/hosts.toml $(IMG_NODE_DIR)/10-podline.conflist.tmpl \
		$(IMG_NODE_DIR)/99-loopback.conf $$ctx/; \
	for b in containerd containerd-shim-runc-v2 ctr cnitool; do \
		$(call IMG_ln,$(CURDIR)/bin/$$b,$$ctx/bin/$$b); done; \
	for b in kubelet proxy podline-cri crictl; do \
		if [ -x $(CURDIR)/bin/$$b ]; then $(call IMG_ln,$(CURDIR)/bin/$$b,$$ctx/bin/$$b); fi; done; \
	docker image inspect -f '{{.Id}}' $(IMG_BASE) > $$ctx/base.id; \
	docker save $(IMG_PAUSE) > $$ctx/pause.tar
	$(call IMG_build,$(IMG_NODE),$(IMG_CACHE)/node)

$(IMG_CACHE)/pause.ok: $(IMG_CACHE)/bin/pause
	@set -e; ctx=$(IMG_CACHE)/pause; rm -rf $$ctx; mkdir -p $$ctx; \
	cp -a $(IMG_SRC_DIR)/pause/Dockerfile $$ctx/; $(call IMG_ln,$(IMG_CACHE)/bin/pause,$$ctx/pause)
	$(call IMG_build,$(IMG_PAUSE),$(IMG_CACHE)/pause)

$(IMG_CACHE)/web.ok: $(IMG_CACHE)/bin/web $(IMG_CACHE)/busybox/bin/busybox
	@set -e; ctx=$(IMG_CACHE)/web; rm -rf $$ctx; mkdir -p $$ctx/rootfs/bin $$ctx/rootfs/tmp; \
	cp -a $(IMG_SRC_DIR)/web/Dockerfile $$ctx/; \
	chmod 1777 $$ctx/rootfs/tmp; \
	$(call IMG_ln,$(IMG_CACHE)/bin/web,$$ctx/rootfs/bin/web); \
	$(call IMG_ln,$(IMG_CACHE)/busybox/bin/busybox,$$ctx/rootfs/bin/busybox); \
	for a in sh wget cat ls true sleep echo env ps ip hostname; do ln -s busybox $$ctx/rootfs/bin/$$a; done
	$(call IMG_build,$(IMG_WEB),$(IMG_CACHE)/web)

# The healthcheck of FROM-scratch third-party images (registry, NATS).
$(IMG_CACHE)/bin/podline-probe: pkg/cmd/podline-probe/main.go pkg/healthprobe/probe.go
	@mkdir -p $(@D)
	cd $(CURDIR)/pkg && $(IMG_GO) -o $@ ./cmd/podline-probe
	@touch $@

$(IMG_CACHE)/registry.ok: bin/registry $(IMG_CACHE)/bin/podline-probe
	@set -e; ctx=$(IMG_CACHE)/registry; rm -rf $$ctx; mkdir -p $$ctx; \
	$(call IMG_ln,$(IMG_CACHE)/bin/podline-probe,$$ctx/podline-probe); \
	cp -a $(CURDIR)/tools/registry/Dockerfile $(CURDIR)/tools/registry/config.yml $$ctx/; \
	$(call IMG_ln,$(CURDIR)/bin/registry,$$ctx/registry)
	$(call IMG_build,$(IMG_REGISTRY),$(IMG_CACHE)/registry)

# --- the demo image in the registry -----------------------------------------

# Nodes pull registry.podline:5000/demo/web:1.0 over the compose network: the
# compose registry service carries the network alias registry.podline,
# publishes 127.0.0.1:5000 and keeps its data in the volume named
# $(IMG_REGISTRY_VOLUME). When that registry answers on $(IMG_PUSH_ADDR) the
# image is pushed to it; otherwise a temporary registry container on the same
# volume takes the push and is removed afterwards, so the image is there when
# compose's registry starts. Both serve TLS only, with the serving pair of
# `make certs` ($(CERTS_DIR)/registry), and the probe verifies it with the
# cluster CA. `docker push` needs no CA: Docker takes 127.0.0.0/8 as an
# insecure registry, which it reaches over TLS without verifying it.
push-demo: certs web-image registry-image
	@set -e; started=; \
	up() { curl -fsS -m 2 --cacert $(CURDIR)/$(CERTS_DIR)/ca.crt -o /dev/null \
		https://$(IMG_PUSH_ADDR)/v2/ 2>/dev/null; }; \
	if ! up; then \
		echo "starting a temporary registry ($(IMG_REGISTRY_NAME)) on $(IMG_PUSH_ADDR)"; \
		docker rm -f $(IMG_REGISTRY_NAME) >/dev/null 2>&1 || true; \
		docker run -d --name $(IMG_REGISTRY_NAME) -p $(IMG_PUSH_ADDR):5000 \
			-v $(IMG_REGISTRY_VOLUME):/var/lib/registry \
			-v $(CURDIR)/$(CERTS_DIR)/registry:/etc/distribution/pki:ro $(IMG_REGISTRY) >/dev/null; \
		started=1; trap 'docker rm -f $(IMG_REGISTRY_NAME) >/dev/null' EXIT; \
		for i in $$(seq 50); do up && break; sleep 0.2; done; \
		up || { echo "the temporary registry does not answer on https://$(IMG_PUSH_ADDR)" >&2; \
			docker logs --tail 20 $(IMG_REGISTRY_NAME) >&2; exit 1; }; \
	fi; \
	for pair in $(IMG_PUSH_IMAGES); do \
		src=$${pair%%=*}; dst=$(IMG_PUSH_ADDR)/$${pair#*=}; \
		docker tag $$src $$dst; \
		pushed=0; out=$$(docker push $$dst 2>&1) || pushed=$$?; \
		docker rmi $$dst >/dev/null; \
		if [ $$pushed != 0 ]; then echo "$$out" >&2; exit 1; fi; \
		echo "$$out" | tail -n 1; \
	done; \
	if [ -n "$$started" ]; then echo "pushed into volume $(IMG_REGISTRY_VOLUME); temporary registry removed"; fi

# The end-to-end check of the node image (a few minutes at most; cleans up).
# Its registry serves TLS with the pair of `make certs`.
node-smoke: images certs
	PKI_DIR=$(CURDIR)/$(CERTS_DIR) $(IMG_NODE_DIR)/smoke.sh
