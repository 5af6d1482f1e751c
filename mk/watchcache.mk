# The NATS fan-out watch cache (services/watchcache, issue 9).
#
#   make test             also builds bin/nats-server first: the watchcache's
#                         integration tests start it (they skip without it)
#   make watchcache-image podline/watchcache:dev, FROM scratch
#   make nats-image       podline/nats:v2.15.2, FROM scratch, JetStream on /data
#   make watchcache-certs the replicas' serving certificate (DNS watchcache,
#                         watchcache-1, watchcache-2) and their client
#                         certificate to the apiserver (CN system:watchcache,
#                         O system:masters: they read every object), signed by
#                         the cluster CA of `make certs`, in $(CERTS_DIR)/watchcache
#   make bench-watch      N watchers on Pods (100, 1,000, 10,000) while pods
#                         are created at 200/s, directly on the apiserver and
#                         through 2 replicas: p50/p99 write-to-event delay,
#                         apiserver CPU, etcd watchers, memory per watcher
#                         (BENCH_WATCH_FLAGS, e.g. -watchers 100 -nodes 1)

WATCHCACHE_IMAGE := podline/watchcache:dev
NATS_IMAGE       := podline/nats:v2.15.2
BENCH_WATCH_DIR  := $(CURDIR)/.cache/bench-watch
BENCH_WATCH_FLAGS ?=

.PHONY: watchcache-image nats-image bench-watch watchcache-certs

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
	cp $(CURDIR)/bin/nats-server $$ctx/nats-server; \
	cp $(IMG_CACHE)/bin/podline-probe $$ctx/podline-probe
	$(call IMG_build,$(NATS_IMAGE),$(IMG_CACHE)/nats)

bench-watch: bin/etcd bin/nats-server
	@mkdir -p $(BENCH_WATCH_DIR)
	cd $(CURDIR)/services/apiserver && $(GO) build -o $(BENCH_WATCH_DIR)/apiserver ./cmd/apiserver
	cd $(CURDIR)/services/watchcache && $(GO) build -o $(BENCH_WATCH_DIR)/watchcache ./cmd/watchcache
	$(GO) run ./services/watchcache/cmd/bench-watch -etcd bin/etcd -nats bin/nats-server \
		-apiserver $(BENCH_WATCH_DIR)/apiserver -watchcache $(BENCH_WATCH_DIR)/watchcache $(BENCH_WATCH_FLAGS)

WATCHCACHE_CERTS := $(CERTS_DIR)/watchcache

watchcache-certs: $(WATCHCACHE_CERTS)/serving.crt $(WATCHCACHE_CERTS)/client.crt

WATCHCACHE_SERVING_EXT := 'subjectAltName=DNS:watchcache,DNS:watchcache-1,DNS:watchcache-2,DNS:localhost,IP:127.0.0.1' 'extendedKeyUsage=serverAuth'
WATCHCACHE_CLIENT_EXT  := 'extendedKeyUsage=clientAuth'

# $(1): name, $(2): subject, $(3): extensions (one quoted word each).
define WATCHCACHE_cert
	@set -e; d=$(WATCHCACHE_CERTS); mkdir -p $$d; \
	printf '%s\n' $(3) > $$d/$(1).ext; \
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout $$d/$(1).key -subj '$(2)' -out $$d/$(1).csr 2>/dev/null; \
	openssl x509 -req -in $$d/$(1).csr -CA $(CERTS_DIR)/ca.crt -CAkey $(CERTS_DIR)/ca.key \
		-CAcreateserial -CAserial $$d/ca.srl -days 365 -extfile $$d/$(1).ext -out $$d/$(1).crt 2>/dev/null; \
	rm -f $$d/$(1).csr $$d/$(1).ext; echo "wrote $$d/$(1).crt"
endef

$(WATCHCACHE_CERTS)/serving.crt: $(CERTS_DIR)/.complete
	$(call WATCHCACHE_cert,serving,/CN=watchcache,$(WATCHCACHE_SERVING_EXT))

$(WATCHCACHE_CERTS)/client.crt: $(CERTS_DIR)/.complete
	$(call WATCHCACHE_cert,client,/O=system:masters/CN=system:watchcache,$(WATCHCACHE_CLIENT_EXT))
