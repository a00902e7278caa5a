package budget

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/logtest"
	"github.com/edgelimit/edgelimit/internal/natstest"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hang bounds a wait for another goroutine's effect (a NATS delivery): a
// hang only, since a loaded machine may take seconds.
const hang = time.Minute

// gossipPoP is PoP pop of a limit of 10 per testWindow over 2 PoPs on
// rdb, on clock, gossiping over nc, closed when the test ends.
func gossipPoP(t *testing.T, rdb redis.UniversalClient, nc *nats.Conn, clock core.Clock, pop string) *Limiter {
	t.Helper()
	l, err := New(Config{PoP: pop, Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2}, rdb, clock)
	require.NoError(t, err)
	require.NoError(t, l.UseNATS(nc), "UseNATS")
	t.Cleanup(func() { l.Close(context.Background()) })
	return l
}

// overLimitAcross has a drive key k over its limit at Redis (b holding a
// full entry of it) until a's Sync gossips it, then waits until b hears
// it (a minute bounds a hang only).
func overLimitAcross(t *testing.T, a, b *Limiter, clock *core.ManualClock) {
	t.Helper()
	ctx := context.Background()
	for range 2 { // b holds a full entry of k: its free unit, then a unit Redis decides
		_, err := b.Allow(ctx, "k")
		require.NoError(t, err)
	}
	// a asks for k every 100 ms: the limit fills with budget held at both
	// PoPs (headroom 0, not C alone), and early in the next window Redis'
	// counts alone (the previous window's weight) leave no room
	for i := 0; a.Stats().GossipSent == 0; i++ {
		require.Less(t, i, 300, "Redis' count of k alone fills the limit within 30 s of requests")
		_, err := a.Allow(ctx, "k")
		require.NoError(t, err)
		require.NoError(t, a.Sync(ctx))
		require.NoError(t, b.Sync(ctx))
		clock.Advance(100 * time.Millisecond)
	}
	require.Eventually(t, func() bool { return b.Stats().GossipDenies > 0 }, hang, 5*time.Millisecond,
		"b hears that k is over its limit")
}

// TestLimiterGossipOverNATS: two PoPs' Limiters on a real Redis and a
// real NATS. Once Redis' count of an identity alone fills its limit at
// one PoP, that PoP's Sync publishes it, and the other, which holds the
// identity, denies it without a round trip; a malformed payload on the
// subject is counted and dropped. UseNATS twice is refused with
// ErrConfig, after Close with ErrClosed.
func TestLimiterGossipOverNATS(t *testing.T) {
	rdb, _ := redistest.Client(t)
	srv := natstest.Start(t)
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	ctx := context.Background()
	lim := func(pop string) *Limiter {
		l, err := New(Config{PoP: pop, Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2}, rdb, clock)
		require.NoError(t, err)
		require.NoError(t, l.UseNATS(srv.Connect(t)), "UseNATS on a live server")
		return l
	}
	a, b := lim("a"), lim("b")
	overLimitAcross(t, a, b, clock)
	calls := b.Stats().Calls
	d, err := b.Allow(ctx, "k")
	require.NoError(t, err)
	assert.False(t, d.Allowed, "b denies k")
	assert.Equal(t, calls, b.Stats().Calls, "b's denial asked Redis nothing")

	raw := srv.Connect(t)
	require.NoError(t, raw.Publish(Subject(Keyspace("", b.Limit())), []byte("not gossip")))
	require.NoError(t, raw.Flush())
	require.Eventually(t, func() bool { return b.Stats().GossipMalformed == 1 }, hang, 5*time.Millisecond,
		"a malformed payload is counted")

	assert.ErrorIs(t, b.UseNATS(srv.Connect(t)), ErrConfig, "UseNATS twice")
	require.NoError(t, a.Close(ctx))
	require.NoError(t, b.Close(ctx))
	assert.ErrorIs(t, a.UseNATS(srv.Connect(t)), ErrClosed, "UseNATS after Close")
}

// TestGossipOverNATSCredentialsNotLogged: NATS user/password and token are
// the connection's own options, so gossip works unchanged on a server that
// refuses anonymous clients and wrong credentials; the refusals do not echo
// the secret tried, and nothing logged during the test (the standard
// logger, go-redis' logger; the library itself has no logger) contains
// either secret.
func TestGossipOverNATSCredentialsNotLogged(t *testing.T) {
	const secret, wrong = "s3cret-nats-pa55", "guess-nats-pa55"
	for _, c := range []struct {
		name         string
		start        func(t *testing.T) *natstest.Server
		right, guess nats.Option
	}{
		{"user/password",
			func(t *testing.T) *natstest.Server { return natstest.StartWithUser(t, "edge", secret) },
			nats.UserInfo("edge", secret), nats.UserInfo("edge", wrong)},
		{"token",
			func(t *testing.T) *natstest.Server { return natstest.StartWithToken(t, secret) },
			nats.Token(secret), nats.Token(wrong)},
	} {
		t.Run(c.name, func(t *testing.T) {
			logs := logtest.Start(t)
			rdb, _ := redistest.Client(t)
			srv := c.start(t)
			for what, opts := range map[string][]nats.Option{"anonymous": nil, "wrong secret": {c.guess}} {
				nc, err := nats.Connect(srv.URL, append(opts, nats.Timeout(2*time.Second))...)
				if err == nil {
					nc.Close()
				}
				require.Error(t, err, "%s client refused", what)
				assert.NotContains(t, err.Error(), "pa55", "%s client: the error shows no secret", what)
			}
			clock := core.NewManualClock(time.UnixMilli(w0 + 5))
			// UseNATS with the right credentials
			a, b := gossipPoP(t, rdb, srv.Connect(t, c.right), clock, "a"), gossipPoP(t, rdb, srv.Connect(t, c.right), clock, "b")
			overLimitAcross(t, a, b, clock)
			assert.NotContains(t, logs.String(), "pa55", "no secret logged")
		})
	}
}
