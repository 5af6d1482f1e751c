# End-to-end tests against the compose cluster (e2e/, build tag e2e).
#
#   make e2e          a clean cluster (`make clean up`), the tests, then
#                     `make clean` again, whatever the tests did
#   make bench-birth  on a running cluster: apply -> 3 Pods Running, 10 runs
#                     (p50, min, max)

E2E_FLAGS ?= -v -timeout 40m
BENCH_BIRTH_RUNS ?= 10

.PHONY: e2e bench-birth
e2e:
	$(MAKE) --no-print-directory clean
	$(MAKE) --no-print-directory up
	@status=0; $(GO) test -tags e2e -count=1 $(E2E_FLAGS) ./e2e/ || status=$$?; \
	$(MAKE) --no-print-directory clean; exit $$status

bench-birth:
	$(GO) test -tags e2e -run '^$$' -bench BenchmarkBirth -benchtime $(BENCH_BIRTH_RUNS)x -timeout 30m ./e2e/
