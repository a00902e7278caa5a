package service

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spentBetween is a limiter that, after its first denial, has another
// request spend 100 units of the denied key before the denial is
// answered, as a concurrent request may between a charge's calls.
type spentBetween struct {
	core.Limiter
	done bool
}

func (l *spentBetween) AllowN(ctx context.Context, key string, now time.Time, n int64) (core.Decision, error) {
	d, err := l.Limiter.AllowN(ctx, key, now, n)
	if err == nil && !d.Allowed && !l.done {
		l.done = true
		if _, err := l.Limiter.AllowN(ctx, key, now, 100); err != nil {
			return d, err
		}
	}
	return d, err
}

// spendingBackend is a LocalBackend whose limiters are spentBetween.
type spendingBackend struct {
	*LocalBackend
	lim *spentBetween
}

func (b *spendingBackend) Acquire(l core.Limit) (core.Limiter, func(), error) {
	inner, done, err := b.LocalBackend.Acquire(l)
	if err != nil {
		return nil, nil, err
	}
	if b.lim == nil {
		b.lim = &spentBetween{Limiter: inner}
	}
	return b.lim, done, nil
}

// TestChargeTriesWhatIsLeftAgain: when the quota left that a denial
// reports (300) is partly spent by another request before the charge of
// it (100 of it), the charge tries again with what is left then (200)
// and counts it, so the quota ends spent. It catches a charge that gives
// up after one try, counting nothing of a served response's cost.
func TestChargeTriesWhatIsLeftAgain(t *testing.T) {
	clk := core.NewManualClock(poolT0)
	b := &spendingBackend{LocalBackend: NewLocal(clk, 0)}
	t.Cleanup(func() { b.Close(context.Background()) })
	s, err := New(Options{Backend: b, Clock: clk})
	require.NoError(t, err)
	s.SetConfig(loadRules(t, chargeRules))
	ctx := context.Background()
	resp, err := s.ShouldRateLimit(ctx, tokensRequest("tokens", "v", 700))
	require.NoError(t, err)
	require.Equal(t, uint32(300), resp.Statuses[0].LimitRemaining)
	resp, err = s.ShouldRateLimit(ctx, tokensRequest("tokens", "v", 500))
	require.NoError(t, err)
	require.True(t, b.lim.done, "another request spent 100 between the calls")
	require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.Statuses[0].Code)
	assert.Equal(t, uint32(0), resp.Statuses[0].LimitRemaining, "the 200 left after the other request counted")
	resp, err = s.ShouldRateLimit(ctx, tokensRequest("tokens", "v", 0))
	require.NoError(t, err)
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.OverallCode, "nothing left")
}
