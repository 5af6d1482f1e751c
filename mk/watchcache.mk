# The NATS fan-out watch cache (services/watchcache, issue 9).
#
#   make test             also builds bin/nats-server first: the watchcache's
#                         integration tests start it (they skip without it)
#   make watchcache-image podline/watchcache:dev, FROM scratch
#   make nats-image       podline/nats:v2.15.2, FROM scratch, JetStream on /data,
#                         services/watchcache/nats.conf: TLS, client
#                         certificates of the cluster CA, the apiserver's and
#                         the replicas' only
#   The certificates are in `make certs`' plan (pkg/pki): the replicas'
#   $(CERTS_DIR)/watchcache/serving.{crt,key} and client.{crt,key} (also
#   their identity towards NATS), NATS' $(CERTS_DIR)/nats/server.{crt,key}
#   and ca.crt, the apiserver's $(CERTS_DIR)/apiserver-nats-client.{crt,key}.
#   make bench-watch      N watchers on Pods (100, 1,000, 10,000) while pods
#                         are created at 200/s, directly on the apiserver and
#                         through 2 replicas: p50/p99 write-to-event delay,
#                         apiserver CPU, etcd watchers, memory per watcher
#                         (BENCH_WATCH_FLAGS, e.g. -watchers 100 -nodes 1)

WATCHCACHE_IMAGE := podline/watchcache:dev
NATS_IMAGE       := podline/nats:v2.15.2
BENCH_WATCH_DIR  := $(CURDIR)/.cache/bench-watch
BENCH_WATCH_FLAGS ?=

.PHONY: watchcache-image nats-image bench-watch

test: bin/nats-server

watchcache-image:
	@set -e; ctx=$(IMG_CACHE)/watchcache; mkdir -p $$ctx; \
	cd $(CURDIR)/services/watchcache && CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' \
		-o $$ctx/watchcache ./cmd/watchcache; \
	cp $(CURDIR)/services/watchcache/Dockerfile $$ctx/Dockerfile
	$(call IMG_build,$(WATCHCACHE_IMAGE),$(IMG_CACHE)/watchcache)

# The nats image carries podline-probe as its healthcheck.
nats-image: bin/nats-server $(IMG_CACHE)/bin/podline-probe
	@set -e; ctx=$(IMG_CACHE)/nats; rm -rf $$ctx; mkdir -p $$ctx; \
	cp $(CURDIR)/services/watchcache/nats.Dockerfile $$ctx/Dockerfile; \
	cp $(CURDIR)/services/watchcache/nats.conf $$ctx/nats.conf; \
	cp $(CURDIR)/bin/nats-server $$ctx/nats-server; \
	cp $(IMG_CACHE)/bin/podline-probe $$ctx/podline-probe
	$(call IMG_build,$(NATS_IMAGE),$(IMG_CACHE)/nats)

bench-watch: bin/etcd bin/nats-server
	@mkdir -p $(BENCH_WATCH_DIR)
	cd $(CURDIR)/services/apiserver && $(GO) build -o $(BENCH_WATCH_DIR)/apiserver ./cmd/apiserver
	cd $(CURDIR)/services/watchcache && $(GO) build -o $(BENCH_WATCH_DIR)/watchcache ./cmd/watchcache
	$(GO) run ./services/watchcache/cmd/bench-watch -etcd bin/etcd -nats bin/nats-server \
		-apiserver $(BENCH_WATCH_DIR)/apiserver -watchcache $(BENCH_WATCH_DIR)/watchcache $(BENCH_WATCH_FLAGS)
