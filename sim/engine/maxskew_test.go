package engine

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sim/netmodel"

	"github.com/stretchr/testify/require"
)

// TestEveryModeRunsAtMaxSkew checks that MaxSkew is a skew every mode can
// run with: the PoP furthest behind reads the Unix epoch at the trace's
// start, and no limiter refuses its clock. It catches a MaxSkew past the
// epoch (the PoP behind would read 1969) and offsets that overflow
// Duration at skews of decades (netmodel.Skews forming 2·d·i in one
// product), which hand PoPs clocks centuries off.
func TestEveryModeRunsAtMaxSkew(t *testing.T) {
	_, p := redistest.Client(t)
	e := testEnv(t, "mixed")
	e.RedisAddr = p.Addr
	d := MaxSkew(e.Trace.Config.Window)
	e.Skew = netmodel.Skews(e.Trace.Config.PoPs, d, 3)
	require.Equal(t, e.Start.Add(-d).UnixMilli(), int64(0), "the PoP furthest behind does not start at the epoch")
	for _, mode := range []string{"redis", "redis-servertime", "local", "budget"} {
		e.Namespace = t.Name() + mode
		_, err := Run(context.Background(), e, mode)
		require.NoError(t, err, "mode %s at a skew of ±%s", mode, d)
	}
}
