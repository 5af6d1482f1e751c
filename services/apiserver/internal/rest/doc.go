// Package rest serves podline's API at Kubernetes' REST paths. The routes
// of every resource come from grpc-gateway (generated from proto/gateway.yaml)
// and call the gRPC services in-process; this package supplies what the
// gateway cannot do the way Kubernetes does, each by a small hand-made piece:
//
//   - marshal.go: Kubernetes JSON (pkg/k8sjson) instead of protojson, and
//     watch streams as newline-delimited {"type":..,"object":..} events with
//     errors as ERROR events carrying a Status;
//   - errors.go: every error as a Kubernetes Status with its HTTP code;
//   - filters.go: ?watch=1 on a collection is rewritten to the watch route,
//     request bodies are capped (413), the fieldValidation parameter reaches
//     the decoder and its warnings come back as Warning headers, and a
//     watch's 200 and headers are flushed as soon as the stream opens;
//   - negotiation.go: a body that is not JSON is 415, an Accept header no
//     JSON answer satisfies is 406, and sendInitialEvents (watch-list) is
//     refused with 422 as by a kube-apiserver without WatchList, so that
//     client-go's reflectors fall back to list and watch;
//   - table.go: reads that ask for a meta.k8s.io/v1 Table (kubectl get)
//     are answered with one, printed by internal/printers, through the
//     gateway's response rewriter; watches stream a Table per event;
//   - patch.go: a PATCH's Content-Type becomes the Patch methods' patchType
//     (415 for a type the server does not know); its body reaches them raw;
//   - discovery.go: /api, /apis, /api/v1, /apis/<group>/<version>, /version;
//     aggregated.go: the same as one apidiscovery.k8s.io/v2 document at /api
//     and /apis when the client asks for it;
//   - openapi.go: /openapi/v3 and /openapi/v2 from internal/openapi;
//   - health.go: /healthz, /livez, /readyz (readyz fails while etcd has no quorum).
package rest
