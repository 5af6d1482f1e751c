# Cluster identity: CAs, certificates, keys and kubeconfigs (package
# podline.dev/pkg/pki). `make certs` runs the generator only when
# .podline/pki has not been completed yet; the generator itself keeps every
# existing file, so running it again by hand is always safe:
#
#   go run ./pkg/cmd/podline-certs -nodes control-plane,worker-1,worker-2

CERTS_DIR := .podline/pki
CERTS_NODES ?= control-plane,worker-1,worker-2

.PHONY: certs
certs: $(CERTS_DIR)/.complete

# The marker is written only after a successful run, so an interrupted run
# is finished by the next `make certs`.
$(CERTS_DIR)/.complete:
	cd $(CURDIR) && go run ./pkg/cmd/podline-certs -q \
		-dir $(CERTS_DIR) \
		-kubeconfig .podline/kubeconfig \
		-server https://127.0.0.1:$(or $(PODLINE_APISERVER_PORT),6443) \
		-kubeconfig-dir .podline/kubeconfigs \
		-nodes $(CERTS_NODES)
	@$(MAKE) --no-print-directory certs-owners
	@touch $@

# The controller-manager and scheduler images run as nobody (65534); their
# kubeconfigs (0600) must be theirs to read when compose mounts them.
CERTS_NOBODY_FILES := .podline/kubeconfigs/controller-manager.conf .podline/kubeconfigs/scheduler.conf
.PHONY: certs-owners
certs-owners:
	@chown 65534:65534 $(CERTS_NOBODY_FILES) 2>/dev/null || \
		{ echo "cannot chown $(CERTS_NOBODY_FILES) to 65534 (run as root, or with sudo)" >&2; exit 1; }
