package budget

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWaitingRecordPastItsWindows: a renounced record whose claims never
// went (its group's batch stayed in flight) leaves the live maps when the
// window moves on by a naming, not a Tick, and waits in carry though it
// reaches only windows forgot covers. A request of the identity then
// starts a full entry as if the record were gone: nothing is left to give
// up. Caught mutation: lookups finding such a record (the entry is marked
// to give up slots, and a later Tick sends an item of it that the old
// moving of records never sent: a differential run saw an extra Call).
func TestWaitingRecordPastItsWindows(t *testing.T) {
	m := newTestMachine(t, func(c *Config) { c.Groups = 2 })
	W := int64(testWindow)
	pick := func(g int, prefix string) string {
		for i := 0; ; i++ {
			if k := fmt.Sprintf("%s%d", prefix, i); m.group(m.bucket(k)) == g {
				return k
			}
		}
	}
	a, b, cold, other := pick(0, "a"), pick(1, "b"), pick(0, "cold"), pick(1, "other")
	for _, k := range []string{a, b} {
		m.Request(w0+30, k, 1)
		_, c := m.Request(w0+40, k, 1)
		require.NotNil(t, c)
		m.Complete(w0+45, c, &Result{Now: w0 + 45, Window: m.window(w0 + 45), Items: make([]ItemResult, len(c.Items))}, nil)
	}
	var inA, inB *Call
	for _, c := range m.Tick(w0 + 100) {
		if c.Group == 1 {
			inB = c
		} else {
			inA = c // in flight until the window moved on: cold's claims wait
		}
	}
	require.NotNil(t, inA, "a batch of group 0")
	require.NotNil(t, inB, "a batch of group 1")
	hot := func(k string) []HotKey { return []HotKey{{Key: k, Bucket: m.bucket(k)}} }
	m.Finish(inB, &Result{Now: w0 + 100, Window: m.window(w0 + 100), Items: make([]ItemResult, len(inB.Items)), Hot: hot(cold)}, nil)
	for i := int64(1); i <= 2; i++ {
		m.Request(w0+i*W+50, b, 1)
		for _, c := range m.Tick(w0 + i*W + 100) {
			require.Equal(t, 1, c.Group, "group 0's batch is still in flight")
			r := &Result{Now: w0 + i*W + 100, Window: m.window(w0 + i*W + 100), Items: make([]ItemResult, len(c.Items))}
			if i == 2 {
				r.Now, r.Window, r.Hot = w0+3*W+10, m.window(w0+3*W+10), hot(other) // the window moves on here
			}
			m.Finish(c, r, nil)
		}
	}
	x := int64(w0 / W)
	require.Equal(t, x+1, m.forgot, "cold's record reaches x+1 only")
	_, c := m.Request(w0+3*W+20, cold, 3)
	require.NotNil(t, c)
	m.Complete(w0+3*W+30, c, &Result{Now: w0 + 3*W + 30, Window: x + 3, Items: []ItemResult{{Allowed: 3, CW: 3, Headroom: 5}}}, nil)
	require.Contains(t, m.view, cold)
	assert.False(t, m.view[cold].renounce, "nothing of the record is left to give up")
}
