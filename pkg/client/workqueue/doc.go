// Package workqueue is the queue between a controller's event handlers and
// its workers, as in client-go. Handlers Add keys; workers Get a key, reconcile
// it, and call Done. The Queue guarantees that a key is held once however
// often it is added while waiting, and that a key is never handed to two
// workers at once: a key added while it is being processed is queued again
// when Done is called. The DelayingQueue adds AddAfter, and the
// RateLimitingQueue adds AddRateLimited, Forget and NumRequeues, delaying a
// retried key by a RateLimiter: DefaultControllerRateLimiter takes the larger
// of a per-key exponential backoff (5 ms doubling to 1000 s) and an overall
// token bucket (10 qps, burst 100).
//
// Time comes from an injected clock.Clock (WithClock), so the delay
// arithmetic is tested with clock.Fake and no sleeping. ShutDown stops the
// queue at once: Get hands out what is still queued and then reports
// shutdown. ShutDownWithDrain also waits until every queued and in-flight key
// has been processed, so workers must keep running until Get says shutdown.
package workqueue
