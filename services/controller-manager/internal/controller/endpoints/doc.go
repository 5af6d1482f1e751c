// Package endpoints is Kubernetes' endpoints controller: for each Service
// with a selector (not ExternalName) it keeps a core/v1 Endpoints of the
// Service's name and labels (plus service.kubernetes.io/headless for a
// headless Service) whose subsets list the IPs of the Pods the selector
// matches: ready Pods under addresses, the others under notReadyAddresses
// (all under addresses when the Service publishes not-ready addresses),
// each with the ports the Service's targetPorts resolve to in that Pod.
// Pods without an IP, finished or terminating are left out, and addresses
// that serve the same ports share one subset. A headless Service without
// ports lists bare addresses. Past 1000 addresses the subsets are cut
// (ready ones kept first) and the Endpoints is annotated
// endpoints.kubernetes.io/over-capacity: truncated. The Endpoints has no
// owner: when its Service is deleted the controller deletes it, and at start
// it deletes those whose Service went while it was not running. Which Pods
// back a Service, and on which ports, is package backends, shared with the
// endpointslice controller. desired.go computes the subsets (pure);
// controller.go writes them.
package endpoints
