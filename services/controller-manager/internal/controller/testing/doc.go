// Package testing helps the controllers' unit tests in sample-controller's
// style: a Fixture holds a controller.Context whose informers are never
// started (tests put objects straight into their indexers: the fake
// listers) and whose connection is a FakeConn, a recording client that
// serves every resource from an in-memory tracker and records each call as
// an Action ("create pods default/web-7c9d8f6b5-bbbbb"), so a test states
// the writes it expects for a scenario. Builders (MakePod, MakeReplicaSet,
// MakeDeployment, ...) make API objects that read like the spec, and
// FakeRecorder keeps events as "Normal ScalingReplicaSet Scaled up ...".
package testing
