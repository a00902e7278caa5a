package engine

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sim/natsembed"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dropMachine zeroes a result's measurements of the machine (wall time,
// memory), so two runs of one seed compare equal.
func dropMachine(r *Result) { r.WallSeconds, r.Memory = 0, nil }

// TestHybridMeasuresItsViews: on both networks the hybrid modes report the
// Go heap their live views held, per entry, in a sane range for a view
// entry (the tests of sync/hybrid measure about 390 bytes with one peer),
// with the article's references beside it; modes without views report
// none (the command adds Redis' part).
func TestHybridMeasuresItsViews(t *testing.T) {
	_, p := redistest.Client(t)
	ns, err := natsembed.Start()
	require.NoError(t, err)
	defer ns.Stop()
	for _, network := range []string{"honest", "ideal"} {
		for _, mode := range []string{"hybrid", "hybrid-nogossip", "redis", "local"} {
			e := testEnv(t, "spread-attack")
			e.RedisAddr, e.NATSURL, e.Network = p.Addr, ns.URL(), network
			e.Namespace = t.Name() + network + mode
			r, err := Run(context.Background(), e, mode)
			require.NoError(t, err)
			m := r.Memory
			if mode == "redis" || mode == "local" {
				assert.Nil(t, m, "%s %s: memory %+v, want none from the engine", network, mode, m)
				continue
			}
			require.False(t, m == nil || m.View == nil || m.Redis != nil || m.ArticleBytes != 96 || m.CloudflareBytes != 24, "%s %s: memory %+v, want a view, no Redis part, 96 and 24", network, mode, m)
			v := m.View
			assert.False(t, v.Entries <= 0 || v.EntriesPerPoP > 300 || v.Entries != int64(v.EntriesPerPoP*4) ||
				v.BytesPerEntry < 100 || v.BytesPerEntry > 5000,
				"%s %s: view %+v, want entries on 4 PoPs of at most 300 identities, 100..5000 bytes each", network, mode, v)
			ids := e.identitiesSeen()
			assert.False(t, v.Identities != ids || ids < 100 || ids > 300 || v.BytesPerIdentity != float64(v.HeapBytes)/float64(ids),
				"%s %s: view %+v, want the heap per each of the %d identities of the trace (100..300)", network, mode, v, ids)
		}
	}
}
