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
		-kubeconfig-dir .podline/kubeconfigs \
		-nodes $(CERTS_NODES)
	@touch $@
