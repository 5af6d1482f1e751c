# podline-cri (services/cri), the node's CRI runtime, and the CRI tools
# built from sigs.k8s.io/cri-tools (tools/cri-tools).
#
#   make podline-cri     bin/podline-cri, static
#   make cri-tools       bin/crictl and bin/critest (critest is the
#                        cri-tools validation suite, a test binary:
#                        `go test -c` of its package)
#   make cri-test-deps   what the integration tests need: bin/containerd and
#                        its shim, runc and the CNI plugins (kubelet-test-deps)
#                        and busybox-static for the test image
#   make test-cri        podline-cri's unit and integration tests (as root;
#                        they skip, saying why, otherwise)
#   make critest         bin/critest against podline-cri on a real containerd
#
# Each binary is rebuilt only when its inputs changed.

CRI_BUILD_DIR ?= $(CURDIR)/bin
CRI_SRC := $(shell find $(CURDIR)/services/cri $(CURDIR)/pkg -name '*.go' \
	-not -name '*_test.go' -not -path '*/testdata/*' 2>/dev/null) $(CURDIR)/services/cri/go.mod
CRI_TOOLS_GO := GOWORK=off CGO_ENABLED=0 $(GO)

.PHONY: podline-cri cri-tools cri-test-deps test-cri critest

podline-cri: $(CRI_BUILD_DIR)/podline-cri
cri-tools: bin/crictl bin/critest

$(CRI_BUILD_DIR)/podline-cri: $(CRI_SRC)
	@mkdir -p $(CRI_BUILD_DIR)
	cd $(CURDIR)/services/cri && CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $@ ./cmd/podline-cri

# `go build -o` leaves an up-to-date binary untouched: touch records that it
# was checked against the newer go.mod.
bin/crictl: tools/cri-tools/go.mod tools/cri-tools/go.sum
	@mkdir -p $(CURDIR)/bin
	cd $(CURDIR)/tools/cri-tools && $(CRI_TOOLS_GO) build -trimpath -ldflags='-s -w' -o $(CURDIR)/$@ sigs.k8s.io/cri-tools/cmd/crictl
	@touch $@

bin/critest: tools/cri-tools/go.mod tools/cri-tools/go.sum
	@mkdir -p $(CURDIR)/bin
	cd $(CURDIR)/tools/cri-tools && $(CRI_TOOLS_GO) test -c -trimpath -ldflags='-s -w' -o $(CURDIR)/$@ sigs.k8s.io/cri-tools/cmd/critest
	@touch $@

cri-test-deps: kubelet-test-deps
	@[ -x /bin/busybox ] || { apt-get install -y --no-install-recommends busybox-static || \
		{ apt-get update && apt-get install -y --no-install-recommends busybox-static; }; }

# make test runs podline-cri's integration tests on a real containerd.
test: cri-test-deps $(CRI_BUILD_DIR)/podline-cri

test-cri: cri-test-deps
	$(GO) test -count=1 -timeout 20m ./services/cri/...

critest: cri-test-deps bin/critest
	CRI_CRITEST=$(CURDIR)/bin/critest $(GO) test -count=1 -timeout 60m -run TestCritest -v ./services/cri/test/
