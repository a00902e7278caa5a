// Command edgelimit-ratelimit is Envoy's rate limit service
// (envoy.service.ratelimit.v3.RateLimitService) on edgelimit, reading
// envoyproxy/ratelimit's YAML configuration. Every flag can be given as an
// environment variable: EDGELIMIT_ and the flag's name in upper case with
// '-' as '_' (-redis-addr: EDGELIMIT_REDIS_ADDR); a flag on the command line
// wins. See envoy/README.md for the table.
//
//	edgelimit-ratelimit -config rules.yaml -redis-addr 127.0.0.1:6379
//
// SIGINT and SIGTERM stop it gracefully; SIGHUP reloads the configuration at
// once (it is also checked every -reload-interval).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stderr, hup, nil))
}
