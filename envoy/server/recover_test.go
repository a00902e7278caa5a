package server_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/envoy/service"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// panicking is a backend whose next Acquire panics while armed.
type panicking struct {
	service.Backend
	armed atomic.Bool
}

func (b *panicking) Acquire(l core.Limit) (core.Limiter, func(), error) {
	if b.armed.CompareAndSwap(true, false) {
		panic("a client hook's panic")
	}
	return b.Backend.Acquire(l)
}

// TestPanickingCallAnsweredInternal: a call whose handler panics is
// answered with a gRPC Internal error, and the server goes on answering
// the calls after it. It catches the server built without its recovering
// interceptor: the panic ends the test binary.
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
	resp := r.ask(t, "edge", 0, desc("remote_address", "10.0.0.1"))
	assert.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode, "the next call is answered")
}
