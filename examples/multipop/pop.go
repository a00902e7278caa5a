package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/edgelimit/edgelimit/sync/gossip"
	"github.com/edgelimit/edgelimit/sync/hybrid"
	"github.com/nats-io/nats.go"
	goredis "github.com/redis/go-redis/v9"
)

// popOptions are one PoP's settings.
type popOptions struct {
	name, redisAddr, natsURL string
	port                     int
	limit                    int64
	window                   time.Duration
	margin                   float64
}

// keyHeader carries the client identity the limit is counted by.
const keyHeader = "X-Client"

func popCmd(ctx context.Context, args []string, out io.Writer) error {
	var o popOptions
	fs := flag.NewFlagSet("pop", flag.ContinueOnError)
	fs.StringVar(&o.name, "name", "pop1", "this PoP's unique name")
	fs.IntVar(&o.port, "port", 8080, "HTTP port on 127.0.0.1")
	fs.StringVar(&o.redisAddr, "redis", "127.0.0.1:6379", "Redis address")
	fs.StringVar(&o.natsURL, "nats", "nats://127.0.0.1:4222", "NATS URL")
	fs.Int64Var(&o.limit, "limit", 50, "requests per window and client")
	fs.DurationVar(&o.window, "window", 5*time.Second, "the window of -limit")
	fs.Float64Var(&o.margin, "margin", 0.1, "hybrid Margin: decide at Redis above (1-margin)×limit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return runPoP(ctx, o, out)
}

// runPoP serves until ctx ends, then shuts down in order: stop serving,
// close the Node (last gossip and last Sync), close the connections.
func runPoP(ctx context.Context, o popOptions, out io.Writer) error {
	// A limiter's answer is worthless late: ContextTimeoutEnabled lets the
	// middleware's deadline reach a Redis that does not answer, and short
	// dial settings keep a dead Redis from costing seconds (see the README).
	rdb := goredis.NewClient(&goredis.Options{Addr: o.redisAddr, ContextTimeoutEnabled: true,
		DialTimeout: 100 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, DialerRetries: 1})
	defer rdb.Close()
	if err := waitRedis(ctx, rdb); err != nil {
		return err
	}
	nc, err := gossip.Connect(o.natsURL, nats.Name("edgelimit-"+o.name))
	if err != nil {
		return err
	}
	defer nc.Close()
	node, err := hybrid.New(hybrid.Config{PoP: o.name, Limit: core.PerWindow(o.limit, o.window),
		Redis: rdb, NATS: nc, Margin: o.margin, Namespace: "multipop"})
	if err != nil {
		return err
	}
	node.Start(0, 0) // the defaults: Sync and Gossip every 100 ms
	mw, err := middleware.New(middleware.WithLimit("api", node), middleware.WithKeyFunc(middleware.HeaderKey(keyHeader)))
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/", mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "hello from %s\n", o.name)
	})))
	mux.HandleFunc("/ready", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, o.name) })
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.port)))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(out, "pop %s ready on http://%s/ (%d per %s per %s)\n", o.name, ln.Addr(), o.limit, o.window, keyHeader)
	select {
	case <-ctx.Done():
	case err := <-served:
		return err
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	serr := srv.Shutdown(sctx)
	cerr := node.Close(sctx)
	s := node.Stats()
	fmt.Fprintf(out, "pop %s stopped: %d local decisions, %d cached denies, %d at Redis, %d Redis round trips, %d gossip sent, %d received\n",
		o.name, s.LocalDecisions, s.CachedDenies, s.RedisDecisions, s.RedisRoundTrips, s.GossipSent, s.GossipReceived)
	return errors.Join(serr, cerr)
}

// waitRedis pings Redis until it answers, for up to 10 s.
func waitRedis(ctx context.Context, rdb *goredis.Client) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := rdb.Ping(ctx).Err()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("redis at %s: %w", rdb.Options().Addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
