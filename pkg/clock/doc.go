// Package clock is the one seam between podline's time-dependent cores (the
// workqueue's rate limiters and delays, the reflector's backoff and resync)
// and the wall clock. Code takes a Clock; production passes Real, tests pass
// a Fake and move time forward with Step, so delay arithmetic is checked
// exactly and without sleeping. Fake fires a timer when Step or SetTime
// reaches the timer's deadline, the same instant a real timer would fire.
package clock
