package redis

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClusterClientMovedIsOutage: a *goredis.ClusterClient that returns a
// MOVED it did not follow (no redirects allowed, a slot map that names one
// master for every slot), and a type embedding one, are an outage, not a
// configuration error: the fail-open decision and a
// *core.UnavailableError. And a plain client whose server is gone still
// fails open. Caught mutation: telling a cluster client by its concrete
// type (the wrapper's MOVED refused with no decision).
func TestClusterClientMovedIsOutage(t *testing.T) {
	cc, cl := redistest.Cluster(t)
	ctx := context.Background()
	lim := core.PerWindow(5, time.Minute)
	probe := newLimiter(t, cc, lim)
	one := cl.Node(0).Addr
	wrong := goredis.NewClusterClient(&goredis.ClusterOptions{
		Addrs:        []string{one},
		MaxRedirects: -1,
		ClusterSlots: func(context.Context) ([]goredis.ClusterSlot, error) {
			return []goredis.ClusterSlot{{Start: 0, End: 16383, Nodes: []goredis.ClusterNode{{Addr: one}}}}, nil
		},
	})
	t.Cleanup(func() { wrong.Close() })
	var away string
	for i := 0; away == ""; i++ {
		id := fmt.Sprint("user:", i)
		m, err := cl.MasterOf(probe.Key(id))
		require.NoError(t, err)
		if cl.Node(m).Addr != one {
			away = id
		}
	}
	for name, c := range map[string]goredis.UniversalClient{"cluster client": wrong,
		"wrapped cluster client": struct{ *goredis.ClusterClient }{wrong}} {
		l := newLimiter(t, c, lim, WithFailOpen())
		d, err := l.AllowN(ctx, away, time.Now(), 1)
		require.Error(t, err, name)
		t.Logf("%s MOVED: %v, %+v", name, err, d)
		assert.ErrorIs(t, err, core.ErrUnavailable, name)
		assert.NotErrorIs(t, err, core.ErrInvalid, name)
		assert.True(t, d.Allowed, "%s: fail open: %+v", name, d)
		assert.Equal(t, core.SourceFailOpen, d.Source, name)
	}

	c, p := redistest.Client(t)
	pl := newLimiter(t, c, lim, WithFailOpen(), WithTimeout(500*time.Millisecond))
	require.NoError(t, p.Kill())
	d, err := pl.AllowN(ctx, "x", time.Now(), 1)
	assert.ErrorIs(t, err, core.ErrUnavailable)
	assert.NotErrorIs(t, err, core.ErrInvalid)
	assert.True(t, d.Allowed, "a real outage fails open: %+v", d)
	out := make([]core.Decision, 1)
	err = pl.AllowEach(ctx, []Ask{{Key: "x", Now: time.Now(), N: 1}}, out)
	assert.ErrorIs(t, err, core.ErrUnavailable)
	assert.True(t, out[0].Allowed, "AllowEach, a real outage fails open: %+v", out[0])
}
