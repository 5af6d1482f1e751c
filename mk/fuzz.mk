# Fuzz tests of the apiserver's write path (JSON decode, defaulting and
# validation of Pods and Deployments, and the name matchers against
# Kubernetes' regular expressions).
#
#   make fuzz             run each fuzz target for FUZZTIME (default 20s)
#
# Go runs one fuzz target per invocation, so each gets its own run. New
# failing inputs land in testdata/fuzz/ beside the test; commit them so
# they are replayed by plain `go test` from then on.

FUZZTIME ?= 20s
FUZZ_PKG := ./services/apiserver/internal/validation
FUZZ_TARGETS := FuzzDecodeValidatePod FuzzDecodeValidateDeployment FuzzNameMatchers

.PHONY: fuzz
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		echo "fuzz $$t for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $(FUZZ_PKG) || exit 1; \
	done
