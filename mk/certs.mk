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
	@$(MAKE) --no-print-directory certs-owners

# The marker is written only after a successful run, so an interrupted run
# is finished by the next `make certs`.
$(CERTS_DIR)/.complete:
	$(CERTS_GENERATE)
	@touch $@

# When the plan has changed since the last run (new files, such as the
# kubelets' serving certificates), the generator runs again over the
# existing directory: it keeps every file there and creates what is missing.
$(CERTS_DIR)/.plan: $(CURDIR)/pkg/pki/plan.go | $(CERTS_DIR)/.complete
	$(CERTS_GENERATE)
	@touch $@

# The controller-manager, scheduler and Jaeger containers run as nobody
# (65534); their kubeconfigs and serving keys (0600) must be theirs to read
# when compose mounts them. Checked on every `make certs`, so a file the
# list gains is handed over in an existing .podline too; only files not yet
# nobody's are changed.
CERTS_NOBODY_FILES := .podline/kubeconfigs/controller-manager.conf .podline/kubeconfigs/scheduler.conf \
	$(CERTS_DIR)/scheduler/serving.key $(CERTS_DIR)/jaeger/server.key
.PHONY: certs-owners
certs-owners:
	@files=$$(find $(CERTS_NOBODY_FILES) ! -user 65534); \
	if [ -n "$$files" ]; then chown 65534:65534 $$files 2>/dev/null || \
		{ echo "cannot chown $$files to 65534 (run as root, or with sudo)" >&2; exit 1; }; fi
