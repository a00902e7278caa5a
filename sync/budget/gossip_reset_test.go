package budget

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/natstest"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGossipBeforeResetDeniesNothingAfter: a's gossip that k is over its
// limit, delivered again after b's Reset of k (a copy nats.go buffered
// through a reconnection, a slow route), must not deny k at b: Redis
// counts k from 0 after the Reset and pure Redis admits it. It catches
// ResetDone not recording the Reset for hear (resetHeard), which denied k
// with 9 units of 10 left.
func TestGossipBeforeResetDeniesNothingAfter(t *testing.T) {
	rdb, _ := redistest.Client(t)
	srv := natstest.Start(t)
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	ctx := context.Background()
	a, b := gossipPoP(t, rdb, srv.Connect(t), clock, "a"), gossipPoP(t, rdb, srv.Connect(t), clock, "b")
	raw := srv.Connect(t)
	copies := make(chan []byte, 16)
	_, err := raw.Subscribe(Subject(Keyspace("", b.Limit())), func(m *nats.Msg) { copies <- m.Data })
	require.NoError(t, err)
	require.NoError(t, raw.Flush())
	overLimitAcross(t, a, b, clock)
	old := <-copies
	require.NoError(t, b.Reset(ctx, "k"))
	d, err := b.Allow(ctx, "k")
	require.NoError(t, err)
	require.True(t, d.Allowed, "after the Reset b admits k: %+v", d)
	denies := b.Stats().GossipDenies
	require.NoError(t, raw.Publish(Subject(Keyspace("", b.Limit())), old))
	require.NoError(t, raw.Publish(Subject(Keyspace("", b.Limit())), []byte("barrier")))
	require.Eventually(t, func() bool { return b.Stats().GossipMalformed == 1 }, hang, 5*time.Millisecond)
	assert.Equal(t, denies, b.Stats().GossipDenies, "the copy from before the Reset set a deny-until")
	d, err = b.Allow(ctx, "k")
	require.NoError(t, err)
	assert.True(t, d.Allowed, "k, counted from 0 after the Reset, is denied at b: %+v", d)
}

// TestResetHeardForgetsOldResets: the record of Resets for gossip holds
// about two windows of them: once it doubles, those of windows before the
// last but one are dropped, and hear drops a key's record once every
// window it reads is past it. It catches the record growing with every
// Reset ever made.
func TestResetHeardForgetsOldResets(t *testing.T) {
	m := newTestMachine(t, nil)
	for i := range 100 {
		m.resetHeard(fmt.Sprintf("old%d", i), 1)
	}
	require.Len(t, m.resetX, 100, "Resets of one window are all kept")
	for i := range 28 { // the map doubled past 64 at the 64th: it is pruned at 128
		m.resetHeard(fmt.Sprintf("new%d", i), 10)
	}
	require.Len(t, m.resetX, 28, "Resets of window 1 kept at window 10")
	for k, rx := range m.resetX {
		require.Equal(t, int64(11), rx, "%s", k)
	}
	e := m.entry("new0")
	m.hear(13*testWindow, 13*testWindow, 13, e, nil)
	require.Len(t, m.resetX, 27, "a record every window hear reads is past is kept")
	require.NotContains(t, m.resetX, "new0")
}
