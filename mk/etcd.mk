# The etcd image: a FROM scratch image holding bin/etcd and bin/etcdctl
# (built by mk/tools.mk) and podline's etcd-launcher (pkg/cmd/etcd-launcher,
# its entrypoint: it relays etcd's spans to Jaeger over TLS and runs etcd).
# It is rebuilt only when the image is missing or the binaries or the
# Dockerfile are newer than the image we last built, whose id is kept in
# etcd-cluster/.build/image.id.

ETCD_CLUSTER_IMAGE := podline/etcd:3.6.16
ETCD_CLUSTER_BUILD := $(CURDIR)/etcd-cluster/.build
ETCD_CLUSTER_INPUTS := $(CURDIR)/bin/etcd $(CURDIR)/bin/etcdctl $(ETCD_CLUSTER_BUILD)/etcd-launcher \
	$(CURDIR)/etcd-cluster/Dockerfile

.PHONY: etcd-image
# `go build -o` leaves an up-to-date launcher untouched, so it is built on
# every run and only a changed one makes the image stale.
etcd-image: bin/etcd bin/etcdctl
	@mkdir -p $(ETCD_CLUSTER_BUILD)
	cd $(CURDIR)/pkg && CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' \
		-o $(ETCD_CLUSTER_BUILD)/etcd-launcher ./cmd/etcd-launcher
	@id_file=$(ETCD_CLUSTER_BUILD)/image.id; \
	current=$$(docker image inspect -f '{{.Id}}' $(ETCD_CLUSTER_IMAGE) 2>/dev/null); \
	if [ -n "$$current" ] && [ -f $$id_file ] && [ "$$current" = "$$(cat $$id_file)" ] && \
	   [ -z "$$(find $(ETCD_CLUSTER_INPUTS) -newer $$id_file)" ]; then \
		echo "$(ETCD_CLUSTER_IMAGE) is up to date"; \
	else \
		set -e; \
		rm -rf $(ETCD_CLUSTER_BUILD)/skeleton; \
		mkdir -p -m 0700 $(ETCD_CLUSTER_BUILD)/skeleton/var/lib/etcd; \
		tar -C $(ETCD_CLUSTER_BUILD)/skeleton --owner=0 --group=0 --mtime=@0 \
			-cf $(ETCD_CLUSTER_BUILD)/skeleton.tar ./var; \
		cp $(CURDIR)/bin/etcd $(CURDIR)/bin/etcdctl $(ETCD_CLUSTER_BUILD)/; \
		docker build -q -t $(ETCD_CLUSTER_IMAGE) $(CURDIR)/etcd-cluster; \
		docker image inspect -f '{{.Id}}' $(ETCD_CLUSTER_IMAGE) > $$id_file; \
	fi
