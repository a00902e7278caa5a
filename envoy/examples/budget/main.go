// Command budget runs three edgelimit-ratelimit instances on the budget
// backend (one redis-server it starts, an embedded NATS server they gossip
// over), drives them
// with a small bounded gRPC load client that spreads one descriptor over the
// three, and prints, per window, what each instance admitted against the
// limit.
//
//	go run ./examples/budget                      # from envoy/
//	go run ./examples/budget -limit 100 -window 2s -windows 5 -rps 600 -json
//
// Progress goes to stderr; the table (or -json) to stdout.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/edgelimit/edgelimit/envoy/server"
	"github.com/edgelimit/edgelimit/envoy/service"
	"github.com/edgelimit/edgelimit/internal/redisproc"
	"github.com/edgelimit/edgelimit/sim/natsembed"
	"github.com/edgelimit/edgelimit/sync/gossip"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

const instances = 3

// row is one window's outcome.
type row struct {
	Window   int            `json:"window"`
	Sent     int            `json:"sent"`
	Admitted [instances]int `json:"admitted_by_instance"`
	Total    int            `json:"admitted"`
	Limit    int            `json:"limit"`
	Ratio    float64        `json:"admitted_over_limit"`
	Errors   int            `json:"errors"`
}

func main() {
	limit := flag.Int("limit", 100, "requests_per_unit of the shared descriptor")
	window := flag.Duration("window", time.Second, "the rule's window: 1s, 1m, 1h... (a whole unit)")
	windows := flag.Int("windows", 6, "windows to run (the first is partial and not printed)")
	rps := flag.Int("rps", 600, "requests a second, spread round-robin over the instances")
	callers := flag.Int("callers", 8, "concurrent gRPC callers")
	asJSON := flag.Bool("json", false, "print JSON rows instead of a table")
	flag.Parse()
	if err := run(*limit, *window, *windows, *rps, *callers, *asJSON, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "budget:", err)
		os.Exit(1)
	}
}

// unitOf renders the rule's rate_limit for a window of whole seconds.
func unitOf(w time.Duration) (string, error) {
	if w < time.Second || w%time.Second != 0 {
		return "", fmt.Errorf("-window %s is not a whole number of seconds", w)
	}
	return fmt.Sprintf("{unit: second, requests_per_unit: %%d, unit_multiplier: %d}", w/time.Second), nil
}

func run(limit int, window time.Duration, windows, rps, callers int, asJSON bool, stdout, stderr io.Writer) error {
	unit, err := unitOf(window)
	if err != nil {
		return err
	}
	rs, err := redisproc.Start()
	if err != nil {
		return err
	}
	defer rs.Stop()
	ns, err := natsembed.Start()
	if err != nil {
		return err
	}
	defer ns.Stop()
	cfg, err := os.CreateTemp("", "edgelimit-envoy-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(cfg.Name())
	fmt.Fprintf(cfg, "domain: demo\ndescriptors:\n  - key: api_key\n    rate_limit: "+unit+"\n", limit)
	cfg.Close()
	fmt.Fprintf(stderr, "redis-server %s, NATS %s, %d instances, limit %d per %s, %d req/s from %d callers\n",
		rs.Addr, ns.URL(), instances, limit, window, rps, callers)

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	clients := make([]rlsv3.RateLimitServiceClient, instances)
	for i := range instances {
		rdb, err := service.NewRedisClient(service.RedisClientOptions{Addrs: []string{rs.Addr}, Timeout: 200 * time.Millisecond})
		if err != nil {
			return err
		}
		defer rdb.Close()
		nc, err := gossip.Connect(ns.URL())
		if err != nil {
			return err
		}
		defer nc.Close()
		b := service.NewBudget(service.BudgetOptions{PoP: fmt.Sprintf("pop-%d", i), Redis: rdb, NATS: nc, PoPs: instances})
		srv, err := server.New(server.Options{ConfigPath: cfg.Name(), Logger: quiet, Service: service.Options{Backend: b}})
		if err != nil {
			return err
		}
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		go func() { _ = srv.Serve(lis, nil) }()
		defer srv.Shutdown(context.Background())
		conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return err
		}
		defer conn.Close()
		clients[i] = rlsv3.NewRateLimitServiceClient(conn)
	}

	// Load: a ticker hands out rps tokens a second to the callers, for
	// windows windows starting now; each request goes to the next instance.
	w := window.Milliseconds()
	first := time.Now().UnixMilli() / w
	end := time.UnixMilli((first + int64(windows)) * w)
	rows := make([]row, windows)
	var mu sync.Mutex
	work := make(chan int, callers)
	go func() {
		defer close(work)
		tick := time.NewTicker(time.Second / time.Duration(rps))
		defer tick.Stop()
		for n := 0; time.Now().Before(end); n++ {
			<-tick.C
			work <- n
		}
	}()
	req := &rlsv3.RateLimitRequest{Domain: "demo", Descriptors: []*commonv3.RateLimitDescriptor{{
		Entries: []*commonv3.RateLimitDescriptor_Entry{{Key: "api_key", Value: "shared"}}}}}
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range work {
				inst := n % instances
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				resp, err := clients[inst].ShouldRateLimit(ctx, req)
				cancel()
				at := time.Now().UnixMilli()/w - first
				if at < 0 || at >= int64(windows) {
					continue
				}
				mu.Lock()
				r := &rows[at]
				r.Sent++
				switch {
				case err != nil:
					r.Errors++
				case resp.OverallCode == rlsv3.RateLimitResponse_OK:
					r.Admitted[inst]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	out := rows[1:]
	for i := range out {
		out[i].Window = i + 1
		out[i].Limit = limit
		for _, a := range out[i].Admitted {
			out[i].Total += a
		}
		out[i].Ratio = float64(out[i].Total) / float64(limit)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		for _, r := range out {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	fmt.Fprintf(stdout, "%6s  %6s  %6s  %6s  %6s  %8s  %6s  %6s  %6s\n", "window", "sent", "pop-0", "pop-1", "pop-2", "admitted", "limit", "ratio", "errors")
	for _, r := range out {
		fmt.Fprintf(stdout, "%6d  %6d  %6d  %6d  %6d  %8d  %6d  %6.2f  %6d\n", r.Window, r.Sent, r.Admitted[0], r.Admitted[1], r.Admitted[2], r.Total, r.Limit, r.Ratio, r.Errors)
	}
	return nil
}
