# The kubelet (services/kubelet): its binary, what its integration tests
# need on the machine, and its benchmark.
#
#   make kubelet            $(KUBELET_BUILD_DIR)/kubelet, static (bin/kubelet by
#                           default, which the node image copies in)
#   make kubelet-test-deps  runc and the CNI plugins from Debian when missing, and
#                           bin/containerd + shim (mk/images.mk): without them the
#                           real-runtime tests skip, saying which is missing
#   make test-kubelet       the kubelet's unit and integration tests (as root, the
#                           integration tests run the kubelet over CRI against a
#                           real containerd's own CRI plugin)
#   make bench-kubelet      pod startup latency (create -> Running through a watch,
#                           30 pods one by one and 30 at once, p50/p99) and the
#                           kubelet's RSS with 30 pods, on containerd's CRI plugin
#   make lint-kubelet       (part of make lint) the kubelet binary speaks only CRI:
#                           it links neither containerd nor CNI

KUBELET_BUILD_DIR ?= $(CURDIR)/bin
KUBELET_SRC := $(shell find $(CURDIR)/services/kubelet $(CURDIR)/pkg $(CURDIR)/proto -name '*.go' \
	-not -name '*_test.go' -not -path '*/testdata/*' 2>/dev/null) $(CURDIR)/services/kubelet/go.mod

.PHONY: kubelet kubelet-test-deps test-kubelet bench-kubelet lint-kubelet

kubelet: $(KUBELET_BUILD_DIR)/kubelet

$(KUBELET_BUILD_DIR)/kubelet: $(KUBELET_SRC)
	@mkdir -p $(KUBELET_BUILD_DIR)
	cd $(CURDIR)/services/kubelet && CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $@ ./cmd/kubelet

kubelet-test-deps: bin/containerd bin/containerd-shim-runc-v2
	@missing=""; \
	command -v runc >/dev/null 2>&1 || missing="runc"; \
	[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] || missing="$$missing containernetworking-plugins"; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing"; \
		apt-get install -y --no-install-recommends $$missing || \
			{ apt-get update && apt-get install -y --no-install-recommends $$missing; }; \
	fi

# make test runs the kubelet's tests on a real containerd (they skip without
# it, or when not root) and the node's binary.
test: kubelet-test-deps $(KUBELET_BUILD_DIR)/kubelet

test-kubelet: kubelet-test-deps
	$(GO) test -race -count=1 -timeout 20m ./services/kubelet/...

bench-kubelet: kubelet-test-deps
	$(GO) test -run '^$$' -bench BenchmarkKubeletPodStartup -benchtime 1x -timeout 30m ./services/kubelet/test/

lint: lint-kubelet

# The kubelet calls neither containerd nor CNI: the runtime behind its CRI
# socket does (DESIGN.md).
lint-kubelet:
	@bad=$$(cd $(CURDIR)/services/kubelet && $(GO) list -deps ./cmd/kubelet | grep -E '^github.com/(containerd|containernetworking)/'); \
	if [ -n "$$bad" ]; then echo "the kubelet must speak only CRI, but links:"; echo "$$bad"; exit 1; fi
