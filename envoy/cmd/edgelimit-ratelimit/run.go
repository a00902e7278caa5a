package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/envoy/config"
	"github.com/edgelimit/edgelimit/envoy/server"
	"github.com/edgelimit/edgelimit/envoy/service"
	"github.com/edgelimit/edgelimit/metrics"
	"github.com/edgelimit/edgelimit/sync/budget"
	"github.com/edgelimit/edgelimit/sync/gossip"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
)

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1 // could not listen, or serving failed
	exitUsage  = 2 // bad flags or configuration
)

// run is the command: parse, build, serve until ctx ends, stop gracefully.
// Every SIGHUP-like value on hup reloads. ready, when set, gets the listen
// addresses once serving.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, hup <-chan os.Signal, ready func(grpcAddr, httpAddr string)) int {
	o, err := parse(args, getenv, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "edgelimit-ratelimit:", err)
		return exitUsage
	}
	log := logger(o, stderr)
	alg, err := core.ParseAlgorithm(o.algorithm)
	if err != nil {
		fmt.Fprintf(stderr, "edgelimit-ratelimit: -algorithm %q: want sliding, fixed, bucket or log\n", o.algorithm)
		return exitUsage
	}
	reg := prometheus.NewRegistry()
	col := metrics.New()
	reg.MustRegister(col)
	backend, closeConns, err := buildBackend(ctx, o, col, log)
	if err != nil {
		fmt.Fprintln(stderr, "edgelimit-ratelimit:", err)
		return exitUsage
	}
	defer closeConns()
	srv, err := server.New(server.Options{
		ConfigPath: o.config, ConfigOptions: config.Options{DefaultAlgorithm: alg},
		ReloadInterval: o.reloadInterval, CloseTimeout: o.closeTimeout, Registry: reg, Logger: log,
		Service: service.Options{Backend: backend, ShadowMode: o.shadow, Headers: o.headers, DefaultAlgorithm: alg},
	})
	if err != nil {
		_ = backend.Close(context.Background())
		fmt.Fprintln(stderr, "edgelimit-ratelimit:", err)
		return exitUsage
	}
	gl, err := net.Listen("tcp", o.grpcAddr)
	if err != nil {
		_ = backend.Close(context.Background())
		fmt.Fprintln(stderr, "edgelimit-ratelimit:", err)
		return exitFailed
	}
	var hl net.Listener
	httpAddr := ""
	if o.httpAddr != "" {
		if hl, err = net.Listen("tcp", o.httpAddr); err != nil {
			gl.Close()
			_ = backend.Close(context.Background())
			fmt.Fprintln(stderr, "edgelimit-ratelimit:", err)
			return exitFailed
		}
		httpAddr = hl.Addr().String()
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(gl, hl) }()
	if ready != nil {
		ready(gl.Addr().String(), httpAddr)
	}
	for {
		select {
		case <-hup:
			_, _ = srv.Reload()
			continue
		case err := <-served:
			log.Error("serving failed", "err", err)
			_ = srv.Shutdown(context.Background())
			return exitFailed
		case <-ctx.Done():
		}
		break
	}
	log.Info("stopping", "timeout", o.shutdownTimeout, "close_timeout", o.closeTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Error("shutdown", "err", err)
		return exitFailed
	}
	if err := <-served; err != nil {
		log.Error("serving", "err", err)
		return exitFailed
	}
	return exitOK
}

// poolOptions bound the limiters the backend keeps besides the
// configuration's: -limiter-idle, -max-limiters, and -close-timeout for a
// released limiter's close as for the backend's at a stop.
func poolOptions(o *options) service.PoolOptions {
	return service.PoolOptions{Idle: o.limiterIdle, Max: o.maxLimiters, CloseTimeout: o.closeTimeout}
}

func logger(o *options, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(o.logLevel))
	ho := &slog.HandlerOptions{Level: level}
	if o.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, ho))
	}
	return slog.New(slog.NewTextHandler(w, ho))
}

// buildBackend builds the chosen backend and the connections it uses;
// closeConns closes them (after the backend's Close). A Redis client that
// cannot reach every key is refused (checkRedis).
func buildBackend(ctx context.Context, o *options, col *metrics.Collector, log *slog.Logger) (service.Backend, func(), error) {
	pool := poolOptions(o)
	if o.backend == "local" {
		return service.NewLocalPool(nil, o.localCapacity, pool), func() {}, nil
	}
	rdb, err := service.NewRedisClient(service.RedisClientOptions{
		Addrs: strings.Split(o.redisAddr, ","), MasterName: o.redisMaster, Cluster: o.redisCluster,
		Username: o.redisUsername, Password: o.redisPassword, DB: o.redisDB, Timeout: o.redisTimeout,
		TLS: o.redisTLS, CAFile: o.redisCA, CertFile: o.redisCert, KeyFile: o.redisKey,
	})
	if err != nil {
		return nil, nil, err
	}
	// the metrics hook goes on after the startup check (checkRedis), so
	// the series count serving alone: not the check's probe, nor the
	// error reply a Redis not in cluster mode gives its CLUSTER SLOTS
	hook := func() { rdb.AddHook(col.RedisHook("main")) }
	if o.backend == "redis" {
		b := service.NewRedis(rdb, service.RedisOptions{
			Prefix: o.redisPrefix, Timeout: o.redisTimeout, FailOpen: o.failMode == "open",
			PipelineWindow: o.pipelineWindow, PipelineBatch: o.pipelineBatch, Pool: pool,
		})
		if err := checkRedis(ctx, b, o, log); err != nil {
			rdb.Close()
			return nil, nil, err
		}
		hook()
		return b, func() { rdb.Close() }, nil
	}
	// budget (parse refuses any other backend)
	var nc *nats.Conn
	if o.natsURL != "" {
		if nc, err = gossip.Connect(o.natsURL); err != nil {
			rdb.Close()
			return nil, nil, fmt.Errorf("-nats-url: %w", err)
		}
	}
	closeConns := func() {
		if nc != nil {
			nc.Close()
		}
		rdb.Close()
	}
	b := service.NewBudget(service.BudgetOptions{
		PoP: o.pop, Redis: rdb, PoPs: o.budgetPoPs, Namespace: o.redisPrefix, NATS: nc,
		FailClosed: o.failMode == "closed", NoWait: o.budgetNoWait, Sync: o.budgetSync, Pool: pool,
		OnLimiter: func(name string, l *budget.Limiter) {
			col.AddStats(name, func() map[string]float64 { return budgetFields(l.Stats()) })
		},
		OnRelease: func(name string, _ *budget.Limiter) { col.AddStats(name, nil) },
		OnGossipError: func(name string, err error) {
			log.Warn("limit decided without gossip", "limit", name, "err", err)
		},
	})
	if err := checkRedis(ctx, b, o, log); err != nil {
		closeConns()
		return nil, nil, err
	}
	hook()
	return b, closeConns, nil
}

// budgetFields flattens a budget limiter's Stats for the metrics
// collector: its decisions by source and its Redis work.
func budgetFields(s budget.Stats) map[string]float64 {
	f := map[string]float64{"calls": float64(s.Calls), "items": float64(s.Items), "round_trips": float64(s.RoundTrips),
		"visits": float64(s.Visits), "promoted": float64(s.Promoted), "gossip_sent": float64(s.GossipSent),
		"gossip_denies": float64(s.GossipDenies), "gossip_malformed": float64(s.GossipMalformed), "gossip_lost": float64(s.GossipLost)}
	for src, n := range s.Decisions {
		f["decisions_"+strings.ReplaceAll(budget.Source(src).String(), "-", "_")] = float64(n)
	}
	return f
}
