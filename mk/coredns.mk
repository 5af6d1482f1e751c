# Cluster DNS by the real CoreDNS (issue 16), built from the pinned module in
# tools/coredns (GOWORK=off, outside go.work) with the plugin set of
# tools/coredns/main.go.
#
#   make coredns        bin/coredns (static), rebuilt only when tools/coredns'
#                       go.mod, go.sum or main.go changed
#   make coredns-image  podline/coredns:1.15.0 FROM scratch (the binary,
#                       /etc/passwd and /etc/group of user 65532), rebuilt
#                       only when its staged context changed (IMG_build)
#   make test-coredns   tools/coredns' tests against bin/coredns: hosts,
#                       health, ready, REFUSED outside the served zones
#   make push-demo      also pushes the image; nodes pull it as
#                       registry.podline:5000/coredns:1.15.0
#
# The cluster's manifest is $(COREDNS_MANIFEST): kube-system's ServiceAccount
# coredns, ClusterRole and ClusterRoleBinding system:coredns, ConfigMap
# coredns, Deployment coredns and Service kube-dns at 10.96.0.10.
#
# Cold build on 2 busy cores: several minutes (about 190 packages, client-go
# among them). This file is included before images.mk and tools.mk: target
# and prerequisite names here must not use their variables (IMG_CACHE, ...),
# which recipes may.

COREDNS_VERSION  := 1.15.0
COREDNS_IMAGE    := podline/coredns:$(COREDNS_VERSION)
COREDNS_MANIFEST := $(CURDIR)/tools/coredns/coredns.yaml
COREDNS_DIR      := $(CURDIR)/tools/coredns

# Pushed by push-demo (images.mk) as <registry>/coredns:1.15.0.
IMG_PUSH_IMAGES += $(COREDNS_IMAGE)=coredns:$(COREDNS_VERSION)
push-demo: coredns-image

.PHONY: coredns coredns-image test-coredns
coredns: bin/coredns

# `go build -o` leaves an up-to-date binary untouched, so the recipe touches
# its target to record that it was checked against the newer inputs.
bin/coredns: tools/coredns/go.mod tools/coredns/go.sum tools/coredns/main.go
	@mkdir -p $(CURDIR)/bin
	cd $(COREDNS_DIR) && GOWORK=off CGO_ENABLED=0 $(GO) build -trimpath \
		-ldflags "-s -w -X github.com/coredns/coredns/coremain.GitCommit=podline" \
		-o $(CURDIR)/$@ .
	@touch $@

# The staged binary is a copy, not a link to bin/coredns, because it gets the
# file capability cap_net_bind_service=+ep (docker build keeps it as an
# xattr in the layer): user 65532 binds port 53 with only NET_BIND_SERVICE
# in its bounding set, as kubeadm's CoreDNS Pod runs.
coredns-image: bin/coredns
	@set -e; ctx=$(IMG_CACHE)/coredns; rm -rf $$ctx; mkdir -p $$ctx; \
	command -v setcap >/dev/null || apt-get install -y --no-install-recommends libcap2-bin || \
		{ apt-get update -qq && apt-get install -y --no-install-recommends libcap2-bin; }; \
	cp $(COREDNS_DIR)/Dockerfile $(COREDNS_DIR)/passwd $(COREDNS_DIR)/group $$ctx/; \
	cp $(CURDIR)/bin/coredns $$ctx/coredns; \
	setcap cap_net_bind_service=+ep $$ctx/coredns
	$(call IMG_build,$(COREDNS_IMAGE),$(IMG_CACHE)/coredns)

# make test runs them too (they skip without bin/coredns, so it is built first).
test: test-coredns
test-coredns: bin/coredns
	cd $(COREDNS_DIR) && GOWORK=off $(GO) test -count=1 -timeout 5m ./...
