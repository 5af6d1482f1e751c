// Package client is podline's typed Go client over gRPC: one generic
// Client[T] serves every kind (Get, List, Create, Update, UpdateStatus,
// Delete, Watch), deriving the service and messages from T's proto
// descriptor and the resource table, so the components' code reads like
// client-go's typed clientsets (client.Pods(conn).Get(ctx, "default", "web")).
// Errors are *apierrors.StatusError, so apierrors.IsConflict and friends
// work as they do with client-go. ListerWatcher adapts a Client to the
// informers in package cache.
package client
