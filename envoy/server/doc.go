// Package server runs the rate limit service: the gRPC server
// (RateLimitService and grpc.health.v1), an HTTP server for /metrics and
// /healthcheck, the configuration's reload on change, and a graceful
// shutdown that stops taking requests, finishes those in flight and then
// closes the backend (the budget backend's last Sync reports its units to Redis).
package server
