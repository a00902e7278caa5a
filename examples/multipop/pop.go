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
	"github.com/edgelimit/edgelimit/sync/budget"
	"github.com/edgelimit/edgelimit/sync/gossip"
	"github.com/nats-io/nats.go"
	goredis "github.com/redis/go-redis/v9"
)

// popOptions are one PoP's settings.
type popOptions struct {
	name, redisAddr, natsURL string
	port                     int
	limit                    int64
	window                   time.Duration
	pops                     int // the deployment's PoPs
}

// keyHeader carries the client identity the limit is counted by.
const keyHeader = "X-Client"

func popCmd(ctx context.Context, args []string, out io.Writer) error {
	var o popOptions
	fs := flag.NewFlagSet("pop", flag.ContinueOnError)
	fs.StringVar(&o.name, "name", "pop1", "this PoP's unique name")
	fs.IntVar(&o.port, "port", 8080, "HTTP port on 127.0.0.1")
	fs.StringVar(&o.redisAddr, "redis", "127.0.0.1:6379", "Redis address")
	fs.StringVar(&o.natsURL, "nats", "", "NATS URL for gossip between the PoPs (budget.Limiter.UseNATS); empty = no gossip")
	fs.Int64Var(&o.limit, "limit", 50, "requests per window and client")
	fs.DurationVar(&o.window, "window", 5*time.Second, "the window of -limit")
	fs.IntVar(&o.pops, "pops", 3, "the deployment's number of PoPs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return runPoP(ctx, o, out)
}

// limiter is a PoP's budget limiter, its close (which also closes the
// NATS connection it gossips on) and a line of its stats. It embeds the
// *budget.Limiter itself, not a core.Limiter, so the middleware sees its
// DeadlineBound: true with newRedisClient's client, so the middleware
// decides on the request's goroutine and keeps a decision made from the
// PoP's view however late a loaded machine runs it. Behind an interface
// that hides DeadlineBound, the middleware instead abandons any decision
// not back by its deadline (100 ms) and answers 503, even for a calm
// client far below the limit.
type limiter struct {
	*budget.Limiter
	close func(context.Context) error
	stats func() string
}

// newLimiter builds and starts o's budget limiter on rdb, gossiping over
// NATS with -nats; closing it closes what it opened. A client the limiter
// cannot use is refused first.
func newLimiter(ctx context.Context, o popOptions, rdb goredis.UniversalClient) (*limiter, error) {
	b, err := budget.New(budget.Config{PoP: o.name, Limit: core.PerWindow(o.limit, o.window), PoPs: o.pops, Namespace: "multipop"}, rdb, nil)
	if err != nil {
		return nil, err
	}
	// A plain client on a Redis Cluster node never follows the cluster's
	// redirections: every identity whose budget group another node serves
	// would be refused (budget.RedirectError). Refuse it now, reading keys
	// of the limiter's own Namespace (all an ACL user of it may read).
	if err := b.CheckClient(ctx); err != nil {
		return nil, fmt.Errorf("redis at %s: %w", o.redisAddr, err)
	}
	var nc *nats.Conn
	if o.natsURL != "" {
		if nc, err = gossip.Connect(o.natsURL, nats.Name("edgelimit-"+o.name)); err != nil {
			return nil, err
		}
		if err := b.UseNATS(nc); err != nil {
			nc.Close()
			return nil, err
		}
	}
	b.Start() // the default: a Sync every 100 ms
	return &limiter{Limiter: b, close: func(ctx context.Context) error {
		if nc != nil {
			defer nc.Close()
		}
		return b.Close(ctx)
	}, stats: func() string {
		s := b.Stats()
		var here uint64
		for _, src := range []budget.Source{budget.SrcDenyCache, budget.SrcFull, budget.SrcGrant, budget.SrcFree} {
			here += s.Decisions[src]
		}
		here -= s.PaidLate // denied at Redis, then paid here: they waited a round trip
		return fmt.Sprintf("%d decisions here, %d at Redis, %d Redis round trips, %d gossip messages sent, %d identities denied from gossip",
			here, s.Decisions[budget.SrcRedis]+s.PaidLate, s.RoundTrips, s.GossipSent, s.GossipDenies)
	}}, nil
}

// newRedisClient is a PoP's client of the Redis at addr. A limiter's
// answer is worthless late: ContextTimeoutEnabled lets the middleware's
// deadline reach a Redis that does not answer (and makes the budget
// limiter DeadlineBound), and short dial settings keep a dead Redis from
// costing seconds (see the README).
func newRedisClient(addr string) *goredis.Client {
	return goredis.NewClient(&goredis.Options{Addr: addr, ContextTimeoutEnabled: true,
		DialTimeout: 100 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, DialerRetries: 1})
}

// runPoP serves until ctx ends, then shuts down in order: stop serving,
// close the limiter (its last Sync and gossip), close the connections.
func runPoP(ctx context.Context, o popOptions, out io.Writer) error {
	rdb := newRedisClient(o.redisAddr)
	defer rdb.Close()
	if err := waitRedis(ctx, rdb); err != nil {
		return err
	}
	lim, err := newLimiter(ctx, o, rdb)
	if err != nil {
		return err
	}
	mw, err := middleware.New(middleware.WithLimit("api", lim), middleware.WithKeyFunc(middleware.HeaderKey(keyHeader)))
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
	gossiping := "no gossip"
	if o.natsURL != "" {
		gossiping = "gossip over NATS"
	}
	fmt.Fprintf(out, "pop %s ready on http://%s/ (%d per %s per %s, budget, %s)\n", o.name, ln.Addr(), o.limit, o.window, keyHeader, gossiping)
	select {
	case <-ctx.Done():
	case err := <-served:
		return err
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	serr := srv.Shutdown(sctx)
	cerr := lim.close(sctx)
	fmt.Fprintf(out, "pop %s stopped: %s\n", o.name, lim.stats())
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
