package server_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/envoy/service"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// panicking is a backend whose limiters' next AllowN panics while armed
// (as a Redis client hook's panic would), counting the limiters it hands
// out and those given back.
type panicking struct {
	service.Backend
	armed          atomic.Bool
	acquired, done atomic.Int64
}

func (b *panicking) Acquire(l core.Limit) (core.Limiter, func(), error) {
	lim, done, err := b.Backend.Acquire(l)
	if err != nil {
		return nil, nil, err
	}
	b.acquired.Add(1)
	return panickingLimiter{lim, b}, func() { b.done.Add(1); done() }, nil
}

type panickingLimiter struct {
	core.Limiter
	b *panicking
}

func (l panickingLimiter) AllowN(ctx context.Context, key string, now time.Time, n int64) (core.Decision, error) {
	if l.b.armed.CompareAndSwap(true, false) {
		panic("a client hook's panic")
	}
	return l.Limiter.AllowN(ctx, key, now, n)
}

// TestPanickingCallAnsweredInternal: a call whose limiter panics is
// answered with a gRPC Internal error, the limiter goes back to the
// backend (a reference kept would keep it from ever being released), and
// the server goes on answering the calls after it. It catches the server
// built without its recovering interceptor (the panic ends the test
// binary) and a limiter given back only when its call returns.
func TestPanickingCallAnsweredInternal(t *testing.T) {
	clk := core.NewManualClock(t0)
	o := localOpts(clk)
	b := &panicking{Backend: o.Service.Backend}
	o.Service.Backend = b
	r := start(t, rules, o)
	b.armed.Store(true)
	_, err := r.client.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*commonv3.RateLimitDescriptor{desc("remote_address", "10.0.0.1")}})
	require.Error(t, err, "the panicking call gets an error")
	assert.Equal(t, codes.Internal, status.Code(err), "%v", err)
	assert.Equal(t, b.acquired.Load(), b.done.Load(), "the panicking call's limiter was given back")
	resp := r.ask(t, "edge", 0, desc("remote_address", "10.0.0.1"))
	assert.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode, "the next call is answered")
	assert.Equal(t, b.acquired.Load(), b.done.Load(), "every limiter given back")
}
