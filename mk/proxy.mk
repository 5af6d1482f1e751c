# The node proxy (services/proxy): its binary, what its tests need, and its
# sync benchmark.
#
#   make proxy              $(PROXY_BUILD_DIR)/proxy, static (bin/proxy by
#                           default), for the node image
#   make proxy-test-deps    Debian's nftables (the nft binary) when missing
#   make test-proxy         the proxy's tests: golden rules on knftables' fake,
#                           and as root the real nftables in throwaway netns
#   make bench-proxy-sync   full sync of 1,000 Services x 10 endpoints and one
#                           endpoint change, against knftables' fake and (as
#                           root) the real nft in a netns, in ms/sync

PROXY_BUILD_DIR ?= $(CURDIR)/bin
PROXY_SRC := $(shell find $(CURDIR)/services/proxy $(CURDIR)/pkg $(CURDIR)/proto -name '*.go' \
	-not -name '*_test.go' -not -path '*/testdata/*' 2>/dev/null) $(CURDIR)/services/proxy/go.mod
BENCH_PROXY_SYNC_FLAGS ?= -benchtime 5x

.PHONY: proxy proxy-test-deps test-proxy bench-proxy-sync

proxy: $(PROXY_BUILD_DIR)/proxy

$(PROXY_BUILD_DIR)/proxy: $(PROXY_SRC)
	@mkdir -p $(PROXY_BUILD_DIR)
	cd $(CURDIR)/services/proxy && CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $@ ./cmd/proxy

proxy-test-deps:
	@command -v nft >/dev/null 2>&1 || { echo "installing nftables"; \
		apt-get install -y --no-install-recommends nftables || \
			{ apt-get update && apt-get install -y --no-install-recommends nftables; }; }

# make test runs the real-nftables tests too.
test: proxy-test-deps

test-proxy: proxy-test-deps
	$(GO) test -count=1 ./services/proxy/...

bench-proxy-sync: proxy-test-deps
	$(GO) test -run '^$$' -bench Sync $(BENCH_PROXY_SYNC_FLAGS) ./services/proxy/internal/proxier/
