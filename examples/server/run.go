package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	redisbackend "github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/internal/redisproc"
	goredis "github.com/redis/go-redis/v9"
)

// options are the server's settings, from the command line.
type options struct {
	addr      string        // listen address; port 0 picks a free one
	redisAddr string        // empty: start a private redis-server
	max       int64         // requests per window and client
	window    time.Duration // the window of max
	trusted   []string      // trusted proxy CIDRs, if any
	timeout   time.Duration // the middleware's decision deadline; 0: its default (middleware.DefaultTimeout)
	out       io.Writer     // where the URL is printed
}

// run serves until ctx ends. Once listening it prints the URL to o.out and,
// when ready is not nil, sends it there too.
func run(ctx context.Context, o options, ready chan<- string) error {
	redisAddr, stop, err := redisFor(o.redisAddr)
	if err != nil {
		return err
	}
	defer stop()
	rdb := newRedisClient(redisAddr)
	defer rdb.Close()
	handler, err := newHandler(ctx, rdb, o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String() + "/"
	fmt.Fprintf(o.out, "edgelimit example on %s (Redis at %s, %d requests per %s per client; metrics on %smetrics)\n",
		url, redisAddr, o.max, o.window, url)
	if ready != nil {
		ready <- url
	}
	return serve(ctx, ln, handler)
}

// newRedisClient is the client of the Redis at addr. A limiter's answer is
// worthless late: ContextTimeoutEnabled lets the limiters' timeout and the
// middleware's deadline reach a Redis that accepts connections but does not
// answer (without it a call waits out go-redis' ReadTimeout, 5 s), and the
// short dial settings keep a dead Redis from costing seconds per request.
func newRedisClient(addr string) *goredis.Client {
	return goredis.NewClient(&goredis.Options{Addr: addr, ContextTimeoutEnabled: true,
		DialTimeout: 100 * time.Millisecond, DialerRetries: 1})
}

// checkRedis refuses a Redis Cluster node: the example's plain client
// never follows the cluster's redirections, so every client IP of another
// node's slots would be refused (l.CheckClient, which reads keys of l's
// prefix; its error matches redis.ErrNotClusterClient). A Redis that does
// not answer within 5 s is no reason not to start: the middleware's fail
// mode decides until it does.
func checkRedis(ctx context.Context, l *redisbackend.Limiter) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := l.CheckClient(ctx); errors.Is(err, redisbackend.ErrNotClusterClient) {
		return err
	}
	return nil
}

// redisFor returns addr, or starts a private redis-server when addr is
// empty; stop stops what was started.
func redisFor(addr string) (string, func(), error) {
	if addr != "" {
		return addr, func() {}, nil
	}
	p, err := redisproc.Start()
	if err != nil {
		return "", nil, err
	}
	return p.Addr, func() { _ = p.Stop() }, nil
}

// serve runs an HTTP server on ln until ctx ends, then shuts it down.
func serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
