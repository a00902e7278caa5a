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

// TestPlainClientOnClusterNode: a plain *goredis.Client pointed at one
// master of a real three-master cluster, the limiter failing open. An
// identity whose slot that master serves is decided as usual; one whose
// slot another master serves is redirected (MOVED), which is a
// configuration error and no outage: every call (AllowN, Peek, Reset,
// AllowEach, pipelined AllowN, the bucketed layout) returns an error
// matching core.ErrInvalid, not core.ErrUnavailable (a *RedirectError
// wrapping the MOVED reply), with no decision (denied, not the fail-open
// admission), and nothing is written anywhere. CheckClient refuses that
// client at once, and accepts the cluster client.
func TestPlainClientOnClusterNode(t *testing.T) {
	cc, cl := redistest.Cluster(t)
	ctx := context.Background()
	lim := core.PerWindow(5, time.Minute)
	probe := newLimiter(t, cc, lim)
	master, err := cl.MasterOf(probe.Key("probe"))
	require.NoError(t, err)
	plain := goredis.NewClient(&goredis.Options{Addr: cl.Node(master).Addr})
	t.Cleanup(func() { plain.Close() })
	err = CheckClient(ctx, plain)
	assert.ErrorIs(t, err, ErrNotClusterClient, "CheckClient of a plain client on a cluster node")
	assert.ErrorIs(t, err, core.ErrInvalid, "CheckClient of a plain client on a cluster node")
	assert.NotErrorIs(t, err, core.ErrUnavailable, "CheckClient of a plain client on a cluster node")
	assert.NoError(t, CheckClient(ctx, cc), "CheckClient of a cluster client")

	// home: an identity of that master; away: one of another master (and,
	// bucketed, with its bucket's marker there too).
	var home, away string
	for i := 0; home == "" || away == ""; i++ {
		id := fmt.Sprint("user:", i)
		m, err := cl.MasterOf(probe.Key(id))
		require.NoError(t, err)
		bm, err := cl.MasterOf(BucketMarkerKey(DefaultPrefix, BucketOf(id, 16), Suffix(lim)))
		require.NoError(t, err)
		switch {
		case m == master && bm == master && home == "":
			home = id
		case m != master && bm != master && away == "":
			away = id
		}
	}
	now := time.Now()
	layouts := map[string][]Option{
		"per-identity": {WithFailOpen()},
		"pipelined":    {WithFailOpen(), WithPipelining(time.Millisecond, 8)},
		"bucketed":     {WithFailOpen(), WithBuckets(16)},
	}
	for name, opts := range layouts {
		t.Run(name, func(t *testing.T) {
			redistest.FlushCluster(t, cc)
			l := newLimiter(t, plain, lim, opts...)
			d, err := l.AllowN(ctx, home, now, 1)
			require.NoError(t, err, "an identity of the client's own node")
			require.Equal(t, core.SourceRedis, d.Source, "an identity of the client's own node: %+v", d)
			require.True(t, d.Allowed, "an identity of the client's own node: %+v", d)

			misrouted := func(what string, d core.Decision, err error) {
				t.Helper()
				require.Error(t, err, "%s of an identity of another node", what)
				assert.ErrorIs(t, err, core.ErrInvalid, "%s: a configuration error", what)
				assert.ErrorIs(t, err, ErrNotClusterClient, "%s: a configuration error", what)
				var re *RedirectError
				if assert.ErrorAs(t, err, &re, "%s", what) {
					_, moved := goredis.IsMovedError(re.Err)
					assert.True(t, moved, "%s: wraps the MOVED reply, got %v", what, re.Err)
				}
				assert.Contains(t, err.Error(), "goredis.ClusterClient", "%s: the message names the fix", what)
				assert.NotErrorIs(t, err, core.ErrUnavailable, "%s: no outage", what)
				assert.False(t, d.Allowed, "%s: admitted by the fail mode: %+v", what, d)
				assert.NotEqual(t, core.SourceFailOpen, d.Source, "%s: the fail-mode decision: %+v", what, d)
			}
			d, err = l.AllowN(ctx, away, now, 1)
			misrouted("AllowN", d, err)
			d, err = l.Peek(ctx, away, now)
			misrouted("Peek", d, err)
			misrouted("Reset", core.Decision{}, l.Reset(ctx, away))
			out := make([]core.Decision, 2)
			err = l.AllowEach(ctx, []Ask{{Key: home, Now: now, N: 1}, {Key: away, Now: now, N: 1}}, out)
			misrouted("AllowEach", out[1], err)
			assert.Equal(t, core.SourceRedis, out[0].Source, "AllowEach: the identity of the client's own node decided: %+v", out[0])
			assert.True(t, out[0].Allowed, "AllowEach: the identity of the client's own node decided: %+v", out[0])
			n := redistest.ClusterDBSize(t, cc)
			want := int64(1) // home's key
			if name == "bucketed" {
				want = 2 // home's bucket: its marker and its window's hash
			}
			assert.Equal(t, want, n, "keys in the cluster: only the home identity's")
		})
	}
}

// TestCheckClientSingleNode: CheckClient accepts a plain client of a
// server not in cluster mode, reports an unreachable one as unavailable,
// and refuses a nil client.
func TestCheckClientSingleNode(t *testing.T) {
	c, p := redistest.Client(t)
	ctx := context.Background()
	require.NoError(t, CheckClient(ctx, c), "a single node")
	require.NoError(t, p.Kill())
	err := CheckClient(ctx, c)
	assert.ErrorIs(t, err, core.ErrUnavailable, "a killed node")
	assert.NotErrorIs(t, err, ErrNotClusterClient, "a killed node")
	var nilClient *goredis.Client
	assert.ErrorIs(t, CheckClient(ctx, nilClient), core.ErrInvalid, "a nil client")
}
