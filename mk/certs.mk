# Cluster identity: CAs, certificates, keys and kubeconfigs (package
# podline.dev/pkg/pki). `make certs` runs the generator when .podline/pki
# has not been completed yet or the plan (pkg/pki/plan.go) is newer than its
# last run; the generator itself keeps every existing file, so running it
# again by hand is always safe:
#
#   go run ./pkg/cmd/podline-certs -nodes control-plane,worker-1,worker-2

CERTS_DIR := .podline/pki
CERTS_NODES ?= control-plane,worker-1,worker-2

CERTS_GENERATE = cd $(CURDIR) && go run ./pkg/cmd/podline-certs -q \
		-dir $(CERTS_DIR) \
		-kubeconfig .podline/kubeconfig \
		-server https://127.0.0.1:$(or $(PODLINE_APISERVER_PORT),6443) \
		-kubeconfig-dir .podline/kubeconfigs \
		-nodes $(CERTS_NODES)

.PHONY: certs
certs: $(CERTS_DIR)/.complete $(CERTS_DIR)/.plan

# The marker is written only after a successful run, so an interrupted run
# is finished by the next `make certs`.
$(CERTS_DIR)/.complete:
	$(CERTS_GENERATE)
	@$(MAKE) --no-print-directory certs-owners
	@touch $@

# When the plan has changed since the last run (new files, such as the
# kubelets' serving certificates), the generator runs again over the
# existing directory: it keeps every file there and creates what is missing.
$(CERTS_DIR)/.plan: $(CURDIR)/pkg/pki/plan.go | $(CERTS_DIR)/.complete
	$(CERTS_GENERATE)
	@$(MAKE) --no-print-directory certs-owners
	@touch $@

# The controller-manager and scheduler images run as nobody (65534); their
# kubeconfigs and the schedulers' serving key (0600) must be theirs to read
# when compose mounts them.
CERTS_NOBODY_FILES := .podline/kubeconfigs/controller-manager.conf .podline/kubeconfigs/scheduler.conf \
	$(CERTS_DIR)/scheduler/serving.key
.PHONY: certs-owners
certs-owners:
	@chown 65534:65534 $(CERTS_NOBODY_FILES) 2>/dev/null || \
		{ echo "cannot chown $(CERTS_NOBODY_FILES) to 65534 (run as root, or with sudo)" >&2; exit 1; }
