# The scheduler (services/scheduler): its benchmark and image.
#
#   make bench-scheduler    in-process apiserver on an embedded etcd, 1,000
#                           Node objects, 5,000 Pods with requests, profile
#                           NodeResourcesFit + TaintToleration +
#                           PodTopologySpread: pods/s from the first create to
#                           the last bind, and the scheduling cycle alone (no
#                           I/O) in pods/s. Targets on 2 cores: >= 300 and
#                           >= 2,000. Flags: BENCH_SCHEDULER_FLAGS="-pods 2000
#                           -only cycle -cpuprofile /tmp/cpu.prof"
#   make scheduler-image    podline/scheduler:dev, FROM scratch with the static
#                           binary staged in .cache/images/scheduler/ beside
#                           services/scheduler/cmd/scheduler/Dockerfile

SCHED_IMAGE := podline/scheduler:dev
SCHED_BUILD := $(CURDIR)/.cache/images/scheduler
BENCH_SCHEDULER_FLAGS ?=

.PHONY: bench-scheduler scheduler-image
bench-scheduler:
	$(GO) run ./services/scheduler/cmd/bench-scheduler $(BENCH_SCHEDULER_FLAGS)

scheduler-image:
	@mkdir -p $(SCHED_BUILD)
	cd $(CURDIR)/services/scheduler && CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' \
		-o $(SCHED_BUILD)/scheduler ./cmd/scheduler
	cp $(CURDIR)/services/scheduler/cmd/scheduler/Dockerfile $(SCHED_BUILD)/Dockerfile
	docker build -q -t $(SCHED_IMAGE) $(SCHED_BUILD)
