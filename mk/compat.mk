# client-go compatibility: e2e/compat drives the REST API with the real
# client-go v0.37 (typed clientset, watches, shared informers). It is its
# own module outside go.work, so that client-go, k8s.io/api and
# k8s.io/apimachinery do not move the workspace's dependency versions, and
# is therefore built with GOWORK=off; it reaches podline's modules through
# replace directives.

.PHONY: test-compat lint-compat

test-compat:
	cd e2e/compat && GOWORK=off $(GO) test -count=1 ./...

lint-compat:
	@out=$$(gofmt -l e2e/compat); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	cd e2e/compat && GOWORK=off $(GO) vet ./...
