// Package resilience keeps a run alive through the failures a long agent run
// meets: overloaded or rate-limited providers, flaky networks, and a laptop
// that goes offline for an hour (SPEC R4.1–R4.3).
//
// The pieces are small and separately testable:
//
//   - Reachable and Endpoint probe the provider with one TCP handshake, so an
//     outage is told apart from a provider error without spending money.
//   - Classify and ClassifyErr sort an error into Transient, Fatal or Unknown;
//     fatal is checked first, so a bad key is never waited on.
//   - Policy holds the numbers (attempts, backoff, probe cadence).
//   - Retrier drives a call with that policy. While the endpoint is
//     unreachable it parks and probes instead of burning attempts.
//
// All waiting goes through an injected Clock, so tests run simulated hours
// in microseconds without sleeping (see package clocktest).
package resilience
