# Third-party binaries built from pinned Go modules under tools/ (one go.mod
# each, built with GOWORK=off so they never join go.work). A binary is
# rebuilt only when it is missing or its tools module's go.mod changed.
#
#   make tools      every binary below
#   make kubectl    bin/kubectl only
#
# Cold build times on an idle 2-core machine: jaeger 10-12 min, kubectl
# ~4.5 min, etcd + etcdctl ~2 min. Several times longer while other builds
# share the cores: start `make tools` early.

TOOLS_GO := GOWORK=off CGO_ENABLED=0 go build -trimpath
TOOLS_KUBECTL_VERSION := v1.37.2

.PHONY: tools kubectl
tools: bin/etcd bin/etcdctl bin/kubectl bin/jaeger bin/nats-server
kubectl: bin/kubectl

# make test drives these for real (kubectl against a test apiserver, kubectl
# birth against a real Jaeger); a test that lacks one skips, so make test
# builds them first.
test: bin/kubectl bin/jaeger

# `go build -o` leaves an up-to-date binary untouched, so each recipe touches
# its target to record that it was checked against the newer go.mod.

bin/etcd: tools/etcd/go.mod
	@mkdir -p $(CURDIR)/bin
	cd $(CURDIR)/tools/etcd && $(TOOLS_GO) -o $(CURDIR)/$@ go.etcd.io/etcd/server/v3
	@touch $@

bin/etcdctl: tools/etcd/go.mod
	@mkdir -p $(CURDIR)/bin
	cd $(CURDIR)/tools/etcd && $(TOOLS_GO) -o $(CURDIR)/$@ go.etcd.io/etcd/etcdctl/v3
	@touch $@

bin/kubectl: tools/kubectl/go.mod tools/kubectl/main.go
	@mkdir -p $(CURDIR)/bin
	cd $(CURDIR)/tools/kubectl && $(TOOLS_GO) \
		-ldflags "-X k8s.io/component-base/version.gitVersion=$(TOOLS_KUBECTL_VERSION)" \
		-o $(CURDIR)/$@ .
	@touch $@

bin/jaeger: tools/jaeger/go.mod
	@mkdir -p $(CURDIR)/bin
	cd $(CURDIR)/tools/jaeger && $(TOOLS_GO) -o $(CURDIR)/$@ github.com/jaegertracing/jaeger/cmd/jaeger
	@touch $@

bin/nats-server: tools/nats/go.mod
	@mkdir -p $(CURDIR)/bin
	cd $(CURDIR)/tools/nats && $(TOOLS_GO) -o $(CURDIR)/$@ github.com/nats-io/nats-server/v2
	@touch $@
