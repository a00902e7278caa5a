package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	redisbackend "github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/metrics"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	goredis "github.com/redis/go-redis/v9"
)

// dailyMax is the second limit of the page: requests per client per day.
const dailyMax = 1000

// newHandler builds the routes: "/" behind two Redis-backed limits (o.max
// per o.window, and dailyMax per day) and "/metrics", not limited. A
// client of a Redis Cluster node that would redirect it is refused
// (checkRedis).
func newHandler(ctx context.Context, rdb *goredis.Client, o options) (http.Handler, error) {
	col := metrics.New()
	reg := prometheus.NewRegistry()
	reg.MustRegister(col)
	rdb.AddHook(col.RedisHook("main"))

	// One prefix for both limits: each key names its limit, so they never
	// share a counter.
	short, err := redisbackend.New(rdb, core.PerWindow(o.max, o.window), redisbackend.WithPrefix("example"))
	if err != nil {
		return nil, err
	}
	// Both limits share a prefix and a layout: one check covers their keys.
	if err := checkRedis(ctx, short); err != nil {
		return nil, fmt.Errorf("redis at %s: %w", rdb.Options().Addr, err)
	}
	daily, err := redisbackend.New(rdb, core.PerWindow(dailyMax, 24*time.Hour), redisbackend.WithPrefix("example"))
	if err != nil {
		return nil, err
	}
	key := middleware.RemoteAddrKey
	if len(o.trusted) > 0 {
		if key, err = middleware.TrustedClientIP(middleware.XForwardedFor, o.trusted...); err != nil {
			return nil, err
		}
	}
	opts := []middleware.Option{
		middleware.WithLimit("short", col.Wrap("short", short)),
		middleware.WithLimit("daily", col.Wrap("daily", daily)),
		middleware.WithKeyFunc(key),
		middleware.WithLegacyHeaders(),
	}
	if o.timeout > 0 {
		opts = append(opts, middleware.WithTimeout(o.timeout))
	}
	mw, err := middleware.New(opts...)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/", mw.Wrap(http.HandlerFunc(page)))
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return mux, nil
}

// page is the rate-limited page.
func page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "Hello from behind edgelimit.\nRateLimit-Policy: %s\nRateLimit: %s\n",
		w.Header().Get("RateLimit-Policy"), w.Header().Get("RateLimit"))
}
