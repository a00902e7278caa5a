// Command server is edgelimit's example: a web page behind the rate-limit
// middleware, counted in Redis, with Prometheus metrics on /metrics.
//
//	go run ./examples/server                 # starts a private redis-server
//	go run ./examples/server -redis-addr 127.0.0.1:6379
//
// It prints its URL; then try
//
//	curl -i http://127.0.0.1:8080/
//
// a few times to see the RateLimit fields, and a 429 once the limit is
// passed. Stop it with Ctrl-C.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"
)

func main() {
	var o options
	flag.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on")
	flag.StringVar(&o.redisAddr, "redis-addr", "", "Redis address; empty starts a private redis-server (needs it on PATH)")
	flag.Int64Var(&o.max, "limit", 5, "requests allowed per window and client IP")
	flag.DurationVar(&o.window, "window", 10*time.Second, "the window of -limit")
	proxies := flag.String("trusted-proxies", "", "comma-separated CIDRs of proxies whose X-Forwarded-For is believed")
	flag.Parse()
	if *proxies != "" {
		o.trusted = strings.Split(*proxies, ",")
	}
	o.out = os.Stdout
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o, nil); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}
