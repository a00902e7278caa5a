package server_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/envoy/server"
	"github.com/edgelimit/edgelimit/envoy/service"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// stalling is a backend whose limiters hold every decision until the
// caller goes (a slow call in flight), telling entered when one is held,
// and that records the context its Close got.
type stalling struct {
	service.Backend
	entered  chan struct{}
	closeCtx chan error // the Close context's Err when Close began
}

func (b *stalling) Acquire(l core.Limit) (core.Limiter, func(), error) {
	lim, done, err := b.Backend.Acquire(l)
	if err != nil {
		return nil, nil, err
	}
	return &stalledLimiter{Limiter: lim, entered: b.entered}, done, nil
}

func (b *stalling) Close(ctx context.Context) error {
	b.closeCtx <- ctx.Err()
	return b.Backend.Close(ctx)
}

// stalledLimiter holds AllowN until ctx ends.
type stalledLimiter struct {
	core.Limiter
	entered chan struct{}
}

func (l *stalledLimiter) AllowN(ctx context.Context, key string, now time.Time, n int64) (core.Decision, error) {
	l.entered <- struct{}{}
	<-ctx.Done()
	return core.Decision{}, ctx.Err()
}

// TestCloseOutlivesASlowDrain: on the budget backend, a call in flight
// that outlasts the whole shutdown context (the drain uses all of
// -shutdown-timeout and is cut) still leaves the backend's Close a live
// context of its own (CloseTimeout), so its last Sync returns the unused
// grants to Redis and Shutdown succeeds. The test ends the shutdown
// context itself once the call is held. It catches a Close run on the
// drain's expired context (context deadline exceeded: exit 1, grants
// kept until their window ends).
func TestCloseOutlivesASlowDrain(t *testing.T) {
	rs := startRedis(t)
	clk := core.NewManualClock(t0)
	o := budgetOpts(t, "pop-a", rs.Addr, 1, clk, time.Hour)
	b := &stalling{Backend: o.Service.Backend, entered: make(chan struct{}, 1), closeCtx: make(chan error, 1)}
	o.Service.Backend = b
	o = withConfig(t, o, slidingRules)
	srv, err := server.New(o)
	require.NoError(t, err)
	gl, hl := listen(t, nil), listen(t, nil)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(gl, hl) }()
	conn, err := grpc.NewClient(gl.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	client := rlsv3.NewRateLimitServiceClient(conn)
	asked := make(chan error, 1)
	go func() {
		_, err := client.ShouldRateLimit(context.Background(), req("edge", desc("remote_address", "10.0.0.1")))
		asked <- err
	}()
	<-b.entered // the call is in flight
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the whole shutdown timeout is spent draining
	assert.NoError(t, srv.Shutdown(ctx), "the backend's last Sync had its own time")
	assert.NoError(t, <-b.closeCtx, "Close began with a live context")
	assert.Error(t, <-asked, "the slow call was cut")
	assert.NoError(t, <-served)
}

// TestNegativeCloseTimeoutRefused: a negative CloseTimeout fails New with
// an error matching core.ErrInvalid.
func TestNegativeCloseTimeoutRefused(t *testing.T) {
	o := withConfig(t, localOpts(nil), slidingRules)
	o.CloseTimeout = -time.Second
	_, err := server.New(o)
	assert.ErrorIs(t, err, core.ErrInvalid)
}

// blockingCollector holds a /metrics scrape until release is closed,
// telling entered when one is held.
type blockingCollector struct {
	entered chan struct{}
	release chan struct{}
}

func (c *blockingCollector) Describe(chan<- *prometheus.Desc) {}

func (c *blockingCollector) Collect(chan<- prometheus.Metric) {
	c.entered <- struct{}{}
	<-c.release
}

// TestScrapeOutlastingTheDrainIsCut: a /metrics scrape still running when
// the shutdown context ends is cut, as a gRPC call is, and the stop is
// graceful (nil, exit 0), the backend closed. It catches Shutdown
// reporting the HTTP server's wait for that scrape as a failure (context
// canceled: exit 1).
func TestScrapeOutlastingTheDrainIsCut(t *testing.T) {
	reg := prometheus.NewRegistry()
	col := &blockingCollector{entered: make(chan struct{}, 1), release: make(chan struct{})}
	reg.MustRegister(col)
	o := withConfig(t, localOpts(core.NewManualClock(t0)), slidingRules)
	o.Registry = reg
	srv, err := server.New(o)
	require.NoError(t, err)
	gl, hl := listen(t, nil), listen(t, nil)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(gl, hl) }()
	scraped := make(chan error, 1)
	go func() {
		resp, err := http.Get("http://" + hl.Addr().String() + "/metrics")
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		scraped <- err
	}()
	<-col.entered // the scrape is in flight
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the drain's time is spent
	assert.NoError(t, srv.Shutdown(ctx), "a scrape cut at the end of the drain is no failure")
	close(col.release) // a scrape not cut would now complete
	assert.Error(t, <-scraped, "the scrape was cut")
	assert.NoError(t, <-served)
}
