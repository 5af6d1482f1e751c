# Cluster DNS by the real CoreDNS (issue 16), built from the pinned module in
# tools/coredns (GOWORK=off, outside go.work) with the plugin set of
# tools/coredns/main.go.
#
#   make coredns        bin/coredns (static), rebuilt only when tools/coredns'
#                       go.mod, go.sum or main.go changed
#   make coredns-image  podline/coredns:1.15.0 FROM scratch (the binary,
#                       /etc/passwd and /etc/group), rebuilt
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

# The image runs as root; coredns.yaml narrows the Pod to NET_BIND_SERVICE
# (tools/coredns/Dockerfile says why it is not user 65532).
coredns-image: bin/coredns
	@set -e; ctx=$(IMG_CACHE)/coredns; rm -rf $$ctx; mkdir -p $$ctx; \
	cp $(COREDNS_DIR)/Dockerfile $(COREDNS_DIR)/passwd $(COREDNS_DIR)/group $$ctx/; \
	$(call IMG_ln,$(CURDIR)/bin/coredns,$$ctx/coredns)
	$(call IMG_build,$(COREDNS_IMAGE),$(IMG_CACHE)/coredns)

# make test runs them too (they skip without bin/coredns, so it is built first).
test: test-coredns
test-coredns: bin/coredns
	cd $(COREDNS_DIR) && GOWORK=off $(GO) test -count=1 -timeout 5m ./...
