package budget

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/natstest"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sync/gossip"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGossipNamespaceWildcardRefused: on a real Redis and a real NATS, two
// PoPs of Namespace "fr.eu" drive k over its limit and gossip it. A PoP of
// Namespace "*.eu" (same limit, its own keys, where k is far below the
// limit) must not hear it: UseNATS refuses its Namespace with an error
// matching gossip.ErrSubject and core.ErrInvalid, and it still admits k.
// Subscribed, "*.eu" was a NATS wildcard and heard every "<x>.eu"
// namespace's counts (the test then shows the denial it made, after a
// barrier: a payload on fr.eu's subject it hears after fr.eu's gossip).
// Mutation it catches: Transport.Subscribe without its subject check.
func TestGossipNamespaceWildcardRefused(t *testing.T) {
	rdb, _ := redistest.Client(t)
	srv := natstest.Start(t)
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	ctx := context.Background()
	lim := func(ns, pop string) *Limiter {
		l, err := New(Config{Namespace: ns, PoP: pop, Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2}, rdb, clock)
		require.NoError(t, err)
		t.Cleanup(func() { l.Close(context.Background()) })
		return l
	}
	a, b, wild := lim("fr.eu", "a"), lim("fr.eu", "b"), lim("*.eu", "w")
	require.NoError(t, a.UseNATS(srv.Connect(t)))
	require.NoError(t, b.UseNATS(srv.Connect(t)))
	for range 2 { // wild holds a full entry of k: its free unit, then a unit Redis decides
		d, err := wild.Allow(ctx, "k")
		require.NoError(t, err)
		require.True(t, d.Allowed, "wild admits k: %+v", d)
	}
	err := wild.UseNATS(srv.Connect(t))
	overLimitAcross(t, a, b, clock)
	if err == nil {
		require.NoError(t, b.tr.Publish([]byte("not gossip")))
		require.Eventually(t, func() bool { return wild.Stats().GossipMalformed == 1 }, hang, 5*time.Millisecond,
			"wild hears fr.eu's subject")
		assert.Zero(t, wild.Stats().GossipDenies, "wild (Namespace *.eu) denied k on Namespace fr.eu's counts")
	}
	require.ErrorIs(t, err, gossip.ErrSubject, "UseNATS with Namespace *.eu")
	require.ErrorIs(t, err, core.ErrInvalid, "UseNATS with Namespace *.eu")
	d, err := wild.Allow(ctx, "k")
	require.NoError(t, err)
	assert.True(t, d.Allowed, "wild admits k, under its own limit: %+v", d)
}
