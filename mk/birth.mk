# kubectl-birth (pkg/cmd/kubectl-birth): the kubectl plugin that prints a
# Pod's birth as a waterfall from its trace in Jaeger (or its Events).
#
#   make kubectl-birth    bin/kubectl-birth; with bin/ on PATH, kubectl finds
#                         it as `kubectl birth pod/NAME` or `deploy/NAME`
#
# `go build` is incremental, so the recipe runs every time and costs little
# when nothing changed.

.PHONY: kubectl-birth
kubectl-birth:
	@mkdir -p $(CURDIR)/bin
	cd $(CURDIR)/pkg && CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' \
		-o $(CURDIR)/bin/kubectl-birth ./cmd/kubectl-birth
