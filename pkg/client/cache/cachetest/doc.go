// Package cachetest is an in-memory apiserver for one resource, for tests of
// reflectors, informers and the controllers built on them. A Source keeps
// objects and a revision counter the way etcd and the apiserver do: every
// write gets the next revision as its resourceVersion, a List returns the
// current revision, and a Watch replays every change after the revision it
// is given and then streams new ones, or fails with 410 Gone if that
// revision has been compacted. Tests inject the faults a real connection
// has: DropWatches ends every stream at once (undelivered events are lost,
// as on a broken connection), SendError ends them with an ERROR event,
// FailNextWatch and FailNextList fail calls, Compact forgets history, and
// Bookmark sends a BOOKMARK. ListCalls and WatchCalls record what clients
// asked for, so a test can tell a resumed watch from a relist.
package cachetest
