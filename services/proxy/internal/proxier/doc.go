// Package proxier is podline's node proxy around the pure rules package.
// Informers (informers.go) watch Services and EndpointSlices and only mark
// the Service they touch dirty; Proxier.Run syncs no more often than the
// min-sync-period: a partial sync rebuilds the dirty Services' fragments
// (ServiceFrom turns a Service and its slices into rules.Service) and
// writes only their difference to the table, a full one (the first, after
// a failure, and every sync-period) writes everything and removes what it
// does not own. Each sync is timed in kube-proxy's histograms (metrics.go),
// /healthz says whether the rules are current (healthz.go), and a sync that
// first programs a Pod's ready endpoint is a SyncProxyRules span in the
// trace stamped on its EndpointSlice.
package proxier
