# podline — build, test and run a small Kubernetes control plane.
#
#   make up      build everything offline and start the cluster (docker compose)
#   make test    run the tests
#
# Every Go module of the workspace (go.work) is tested; third-party tools are
# built from tools/*, each its own module outside the workspace.

SHELL := /bin/bash
export PATH := /usr/local/go/bin:$(PATH)
GO ?= go

# The workspace's modules, as directories: go test/vet take them as patterns.
MODULE_DIRS = $(shell $(GO) list -m -f '{{.Dir}}')
MODULE_PKGS = $(addsuffix /...,$(MODULE_DIRS))

PROTO_PLUGINS := bin/buf bin/protoc-gen-go bin/protoc-gen-go-grpc bin/protoc-gen-grpc-gateway

.PHONY: all build test lint proto proto-check bench-api clean-bin

all: build

build:
	$(GO) build $(MODULE_PKGS)

# Unit and integration tests (integration tests run a real etcd in-process;
# etcdctl checks what the apiserver stored, as the seed's lab 5 does).
test: bin/etcdctl
	$(GO) test -count=1 -timeout 20m $(MODULE_PKGS)
	$(MAKE) --no-print-directory test-compat

lint:
	@out=$$(gofmt -l $(MODULE_DIRS)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(MODULE_PKGS)
	$(MAKE) --no-print-directory lint-compat

# Regenerate the API: api.proto and gateway.yaml from the resource table, then Go code with buf.
proto: $(PROTO_PLUGINS)
	cd proto && $(GO) run ./cmd/protogen && ../bin/buf generate

# CI: the committed generated code must be what `make proto` writes.
proto-check: proto
	@git diff --exit-code -- proto || { echo "generated code is stale: run make proto and commit"; exit 1; }
	@untracked=$$(git ls-files --others --exclude-standard proto); if [ -n "$$untracked" ]; then echo "untracked generated files: $$untracked"; exit 1; fi

$(PROTO_PLUGINS) &: tools/proto/go.mod tools/proto/go.sum
	cd tools/proto && GOWORK=off $(GO) build -o $(CURDIR)/bin/ \
		github.com/bufbuild/buf/cmd/buf \
		google.golang.org/protobuf/cmd/protoc-gen-go \
		google.golang.org/grpc/cmd/protoc-gen-go-grpc \
		github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway

# API benchmark: apiserver creates vs raw etcd transactions, watch latency, watch-cache memory.
BENCH_API_FLAGS ?= -creates 3000 -watchers 100 -seconds 10 -cache-pods 10000
bench-api: bin/etcd
	$(GO) run ./services/apiserver/cmd/bench-api -etcd bin/etcd $(BENCH_API_FLAGS)

clean-bin:
	rm -rf bin

-include mk/*.mk
