package budget

import (
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRenouncedRecordFarWindows: with a 1 ms window a clock 2⁶¹ ms or
// more from 1970 (about 73 million years) has window numbers past 62
// bits; a record named there still covers its windows, its claims go with
// the next Tick, and the rolls after it carry or drop it without a panic.
// Caught mutation: a record's through packed in 62 bits and read back as
// is (past +2⁶¹ windows it reads as a window long gone: no claim is sent
// and it stops covering its window; before −2⁶¹ it reads as one far
// ahead: claims of windows that are not the record's, then a carry into
// map index −2⁶², a panic).
func TestRenouncedRecordFarWindows(t *testing.T) {
	for _, now := range []int64{1<<61 + 100, -(1 << 61) - 100, 1<<62 + 7, -(1 << 62)} {
		m := newTestMachine(t, func(c *Config) { c.Limit = core.PerWindow(10, time.Millisecond) })
		h := HotKey{Key: "hot", Bucket: m.bucket("hot")}
		x := m.window(now)
		m.Tick(now)
		m.renounce(h, x)
		through, _, ok := m.renouncedThrough(h.Key, x+1)
		require.True(t, ok, "now %d: the record covers x and x+1", now)
		assert.Equal(t, x+1, through, "now %d", now)
		var claims [][]int64
		require.NotPanics(t, func() {
			for k := int64(1); k <= 4; k++ {
				for _, c := range m.Tick(now + k) {
					for _, it := range c.Items {
						if it.Key == h.Key {
							claims = append(claims, it.Claims)
						}
					}
				}
			}
		}, "now %d: the rolls carry or drop the record", now)
		assert.Equal(t, [][]int64{{x, x + 1}}, claims, "now %d: its claims go once, at the next Tick", now)
		assert.Zero(t, m.renouncedLen(), "now %d: gone two windows past its last", now)
	}
}
