package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/envoy/config"
	"github.com/edgelimit/edgelimit/envoy/service"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// Options' defaults (their zero values).
const (
	// DefaultSweepInterval is Options.SweepInterval's zero value.
	DefaultSweepInterval = time.Second
	// DefaultCloseTimeout is Options.CloseTimeout's zero value, the same
	// as service.DefaultCloseTimeout (PoolOptions.CloseTimeout's).
	DefaultCloseTimeout = service.DefaultCloseTimeout
)

// Options configures a Server. ConfigPath and Service.Backend are required.
type Options struct {
	// ConfigPath is a YAML file or a directory of them (config.Load).
	ConfigPath string
	// ConfigOptions are the parse options (default algorithm).
	ConfigOptions config.Options
	// ReloadInterval is how often ConfigPath is checked for a change;
	// 0 = never (Reload still works).
	ReloadInterval time.Duration
	// SweepInterval is how often, while serving, the backend looks for
	// limiters idle past their PoolOptions.Idle and releases them
	// (service.Sweeper), so a server that gets no requests releases them
	// too; the backend looks at most every Idle/4 by its clock whatever
	// the interval. 0 = DefaultSweepInterval; negative = only at requests.
	// A backend that is not a service.Sweeper is never swept.
	SweepInterval time.Duration
	// CloseTimeout bounds the backend's Close at Shutdown (the budget
	// backend's last Sync, which returns unused grants to Redis), a time
	// of its own after the drain of calls in flight, so a slow drain that
	// spends all of Shutdown's context cannot starve it. 0 =
	// DefaultCloseTimeout; negative is refused by New (core.ErrInvalid).
	// The limiters the backend releases while serving are closed within
	// the backend's own service.PoolOptions.CloseTimeout, which the
	// command sets to the same -close-timeout.
	CloseTimeout time.Duration
	// Service configures the RateLimitService; its Metrics and Logger are
	// set by New when nil.
	Service service.Options
	// Registry receives the metrics; nil = a new registry, served at
	// /metrics.
	Registry *prometheus.Registry
	// OnReload, when set, is called after every reload attempt that found a
	// change, with its error (nil: in force).
	OnReload func(error)
	Logger   *slog.Logger // nil = slog.Default()
}

// Server is a running rate limit service. The zero value is not usable;
// build one with New.
type Server struct {
	o       Options
	svc     *service.Service
	grpc    *grpc.Server
	health  *health.Server
	http    *http.Server
	reg     *prometheus.Registry
	metrics *service.Metrics
	log     *slog.Logger

	mu        sync.Mutex // serialises reloads
	lastFiles string     // fingerprint of the configuration in force
	stop      chan struct{}
	// life orders Serve's start of its goroutines before Shutdown's wait
	// for them; stopping is set under it by Shutdown, after which Serve
	// starts nothing.
	life     sync.Mutex
	stopping bool
	done     sync.WaitGroup
	stopOnce sync.Once
}

// New loads the configuration and builds the server; it serves nothing yet.
// A configuration error is returned as config's one-line *config.Error
// before anything listens.
func New(o Options) (*Server, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.CloseTimeout < 0 {
		return nil, fmt.Errorf("%w: server CloseTimeout %v: want ≥ 0", core.ErrInvalid, o.CloseTimeout)
	}
	if o.CloseTimeout == 0 {
		o.CloseTimeout = DefaultCloseTimeout
	}
	s := &Server{o: o, log: o.Logger, reg: o.Registry, stop: make(chan struct{})}
	if s.reg == nil {
		s.reg = prometheus.NewRegistry()
	}
	s.metrics = service.NewMetrics(s.reg)
	if b := o.Service.Backend; b != nil {
		s.reg.MustRegister(service.PoolCollectors(b)...)
	}
	so := o.Service
	if so.Metrics == nil {
		so.Metrics = s.metrics
	}
	if so.Logger == nil {
		so.Logger = o.Logger
	}
	svc, err := service.New(so)
	if err != nil {
		return nil, err
	}
	s.svc = svc
	set, fp, err := s.load()
	if err != nil {
		s.metrics.ConfigLoaded(false, 0)
		return nil, err
	}
	s.svc.SetConfig(set)
	s.lastFiles = fp
	s.metrics.ConfigLoaded(true, len(set.Domains()))
	s.grpc = grpc.NewServer(grpc.UnaryInterceptor(recoverPanics(s.log)))
	rlsv3.RegisterRateLimitServiceServer(s.grpc, svc)
	s.health = health.NewServer()
	healthpb.RegisterHealthServer(s.grpc, s.health)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthcheck", func(w http.ResponseWriter, r *http.Request) {
		resp, err := s.health.Check(r.Context(), &healthpb.HealthCheckRequest{})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			http.Error(w, "NOT_SERVING", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "OK")
	})
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return s, nil
}

// Service returns the RateLimitService.
func (s *Server) Service() *service.Service { return s.svc }

// Registry returns the Prometheus registry served at /metrics.
func (s *Server) Registry() *prometheus.Registry { return s.reg }

// fingerprint hashes the names and contents of the configuration's files, so
// any change (edit, new file, removed file, a symlink swapped as Kubernetes
// does for a ConfigMap) is seen. A configuration that cannot be read is
// fingerprinted by its error, so the same failure (a missing file) counts
// as one change, reported once, as an unchanged bad file is.
func fingerprint(path string) string {
	fp, err := hashFiles(path)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return fp
}

// hashFiles is fingerprint's hash of the files under path.
func hashFiles(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	files := []string{path}
	if st.IsDir() {
		if files, err = config.Files(path); err != nil {
			return "", err
		}
	}
	h := sha256.New()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(data))
		h.Write(data)
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

func (s *Server) load() (*config.Set, string, error) {
	fp := fingerprint(s.o.ConfigPath)
	set, err := s.loadSet()
	return set, fp, err
}

// loadSet loads the configuration and builds the backend's limiter of every
// rule, so a limit the backend cannot enforce (the budget backend's: any
// algorithm but the sliding window) is a configuration error naming its
// rule.
func (s *Server) loadSet() (*config.Set, error) {
	set, err := config.Load(s.o.ConfigPath, s.o.ConfigOptions)
	if err != nil {
		return nil, err
	}
	// kept while built, so the bound on other limiters releases none of
	// them; SetConfig keeps the new set's alone, a failed load the old's
	b := s.o.Service.Backend
	old := service.Limits(s.svc.Config())
	b.Keep(append(service.Limits(set), old...))
	for _, dr := range set.Rules() {
		_, done, err := b.Acquire(dr.Rule.RateLimit.Limit())
		if err != nil {
			b.Keep(old)
			return nil, &config.Error{File: dr.Domain.File, Line: dr.Rule.Line, Path: dr.Rule.Path + ".rate_limit",
				Kind: config.ErrBadValue, Problem: fmt.Sprintf("the %s backend cannot enforce it: %v", b.Name(), err)}
		}
		done()
	}
	return set, nil
}

// Reload reads the configuration again and puts it in force if it changed
// and loads; on error the configuration in force stays. It reports whether a
// change was seen, and the load's error. A configuration that stays
// unloadable (the same bad file, the same missing file) is one change,
// reported once: later calls see no change until it changes again.
func (s *Server) Reload() (changed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fp := fingerprint(s.o.ConfigPath)
	if fp == s.lastFiles {
		return false, nil
	}
	set, err := s.loadSet()
	if err != nil {
		s.metrics.ConfigLoaded(false, 0)
		s.log.Error("configuration not reloaded; the previous one stays in force", "err", err)
	} else {
		s.svc.SetConfig(set)
		s.metrics.ConfigLoaded(true, len(set.Domains()))
		s.log.Info("configuration reloaded", "path", s.o.ConfigPath, "domains", set.Domains())
	}
	s.lastFiles = fp
	if s.o.OnReload != nil {
		s.o.OnReload(err)
	}
	return true, err
}

// Serve serves gRPC on grpcLis and, when httpLis is not nil, /metrics and
// /healthcheck on it, and runs the reload and sweep loops, until Shutdown.
// It returns the gRPC server's error, nil after Shutdown, including a
// Shutdown before or while Serve starts (a stop asked right at startup),
// which leaves it nothing to serve: the listeners are closed.
func (s *Server) Serve(grpcLis, httpLis net.Listener) error {
	if !s.start(httpLis) {
		grpcLis.Close()
		if httpLis != nil {
			httpLis.Close()
		}
		return nil
	}
	s.log.Info("serving", "grpc", grpcLis.Addr().String(), "backend", s.o.Service.Backend.Name(), "domains", s.svc.Config().Domains())
	err := s.grpc.Serve(grpcLis)
	if errors.Is(err, grpc.ErrServerStopped) && s.stopped() {
		return nil // Shutdown came between start and grpc's Serve
	}
	return err
}

// start turns health SERVING and starts the HTTP server and the loops,
// unless Shutdown has begun: then it starts nothing and returns false.
func (s *Server) start(httpLis net.Listener) bool {
	s.life.Lock()
	defer s.life.Unlock()
	if s.stopping {
		return false
	}
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.health.SetServingStatus(rlsv3.RateLimitService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	if httpLis != nil {
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			if err := s.http.Serve(httpLis); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("http server", "err", err)
			}
		}()
	}
	if s.o.ReloadInterval > 0 {
		s.done.Add(1)
		go s.every(s.o.ReloadInterval, func() { _, _ = s.Reload() })
	}
	if sw, ok := s.o.Service.Backend.(service.Sweeper); ok && s.sweepInterval() > 0 {
		s.done.Add(1)
		go s.every(s.sweepInterval(), sw.Sweep) // the backend releases idle limiters
	}
	return true
}

// stopped tells whether Shutdown has begun.
func (s *Server) stopped() bool {
	s.life.Lock()
	defer s.life.Unlock()
	return s.stopping
}

// every runs f every interval until Shutdown (the reload and the sweep
// loops); s.done counts it.
func (s *Server) every(interval time.Duration, f func()) {
	defer s.done.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			f()
		}
	}
}

func (s *Server) sweepInterval() time.Duration {
	if s.o.SweepInterval == 0 {
		return DefaultSweepInterval
	}
	return s.o.SweepInterval
}

// Shutdown stops the server gracefully: health turns NOT_SERVING, the
// gRPC and HTTP servers stop taking calls and wait for those in flight
// (until ctx ends, then they cut them, which is no error), the loops
// stop, and the backend is closed within Options.CloseTimeout of its own,
// whatever is left of ctx (the budget backend's last Sync), keeping ctx's
// values. It returns the HTTP server's and the backend's errors; later
// calls return nil.
func (s *Server) Shutdown(ctx context.Context) error {
	var err error
	s.stopOnce.Do(func() {
		s.life.Lock()
		s.stopping = true // Serve starts nothing more: done's count is final
		s.life.Unlock()
		s.health.Shutdown()
		close(s.stop)
		stopped := make(chan struct{})
		go func() { s.grpc.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-ctx.Done():
			s.grpc.Stop()
			<-stopped
		}
		herr := s.http.Shutdown(ctx)
		if herr != nil && ctx.Err() != nil && errors.Is(herr, ctx.Err()) {
			// the drain's time is up: cut what is left (a scrape), as
			// grpc's Stop cut the calls
			herr = s.http.Close()
		}
		s.done.Wait()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.o.CloseTimeout)
		defer cancel()
		berr := s.o.Service.Backend.Close(cctx)
		err = errors.Join(herr, berr)
		s.log.Info("stopped", "err", err)
	})
	return err
}
