package redis

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBucketedResetAfterBucketMateAhead: on the bucketed layout, an
// identity that spent its quota is admitted again after Reset even when
// another identity of its bucket was once counted far ahead (a caller
// whose clock ran 100 windows ahead), which moved the bucket's marker past
// BucketHorizon windows from the identity's counts. It catches a Reset
// that deletes fields only around the marker's window, leaving the
// identity's count in the caller's current window and the identity
// denied after a Reset that returned nil.
func TestBucketedResetAfterBucketMateAhead(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	for _, a := range bucketedAlgorithms {
		lim := core.Limit{Max: 3, Window: 10 * time.Second, Algorithm: a}
		t.Run(lim.String(), func(t *testing.T) {
			l := newLimiter(t, c, lim, WithBuckets(1), WithPrefix(fmt.Sprintf("ahead%d", a)))
			now := core.Millis(time.Now())
			d, err := l.AllowN(ctx, "victim", at(now), lim.Max)
			require.NoError(t, err)
			require.True(t, d.Allowed, "the whole quota at now")
			ahead := now + (BucketHorizon+36)*lim.WindowMillis()
			d, err = l.AllowN(ctx, "mate", at(ahead), 1)
			require.NoError(t, err)
			require.True(t, d.Allowed, "the bucket mate, 100 windows ahead")
			d, err = l.AllowN(ctx, "victim", at(now+1), 1)
			require.NoError(t, err)
			require.False(t, d.Allowed, "control: the victim's quota is spent")

			require.NoError(t, l.Reset(ctx, "victim"))
			d, err = l.AllowN(ctx, "victim", at(now+2), 1)
			require.NoError(t, err)
			assert.True(t, d.Allowed, "admitted after Reset")
			assert.Equal(t, lim.Max-1, d.Remaining, "the full quota after Reset, less this unit")
		})
	}
}
