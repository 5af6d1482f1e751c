# The controller-manager (services/controller-manager): its benchmark and image.
#
#   make bench-controllers          100 Deployments x 10 replicas against an
#                                   in-process apiserver: time until all 1,000
#                                   Pods exist (target 10 s) and writes per Pod.
#                                   Flags: BENCH_CONTROLLERS_FLAGS="-deployments 50 -replicas 4"
#   make controller-manager-image   podline/controller-manager:dev, FROM scratch
#                                   with the static binary staged in
#                                   .cache/images/controller-manager/

CM_IMAGE := podline/controller-manager:dev
CM_BUILD := $(CURDIR)/.cache/images/controller-manager
BENCH_CONTROLLERS_FLAGS ?=

.PHONY: bench-controllers controller-manager-image
bench-controllers:
	$(GO) run ./services/controller-manager/cmd/bench-controllers $(BENCH_CONTROLLERS_FLAGS)

controller-manager-image:
	@mkdir -p $(CM_BUILD)
	cd $(CURDIR)/services/controller-manager && CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' \
		-o $(CM_BUILD)/controller-manager ./cmd/controller-manager
	cp $(CURDIR)/services/controller-manager/Dockerfile $(CM_BUILD)/Dockerfile
	docker build -q -t $(CM_IMAGE) $(CM_BUILD)
