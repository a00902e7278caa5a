package budget

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTickFollowsActivity: a Tick looks at the identities asked about since
// the last one plus a sweep of len(view) × SyncInterval / window, not the
// whole view; the sweep still reaches every identity, so idle ones are
// forgotten. Caught mutations: a Tick that walks the whole view (the
// visits bound fails), a sweep that never drops an idle identity (the view
// never empties).
func TestTickFollowsActivity(t *testing.T) {
	m := newTestMachine(t, nil)
	const ids = 5000
	for i := range ids {
		m.Request(w0, fmt.Sprintf("id%d", i), 1) // free credit each
	}
	finish := func(calls []*Call) {
		for _, c := range calls {
			m.Finish(c, &Result{Now: c.Now, Window: m.window(c.Now), Items: make([]ItemResult, len(c.Items))}, nil)
		}
	}
	finish(m.Tick(w0 + 100))
	require.Equal(t, ids, m.Len(), "every identity asked about is in the view")
	step := m.Config().SyncInterval.Milliseconds()
	perTick := uint64((ids*step + testWindow - 1) / testWindow)
	for tick := int64(2); m.Len() > 0; tick++ {
		require.Less(t, tick, int64(20*testWindow/step), "the view must empty within 20 windows of idleness")
		before := m.Stats().Visits
		finish(m.Tick(w0 + tick*step))
		assert.LessOrEqual(t, m.Stats().Visits-before, perTick, "tick %d: a quiet Tick visits only the sweep's share", tick)
	}
	_, c := m.Request(w0+30*testWindow, "id7", 1)
	assert.Nil(t, c, "a forgotten identity starts afresh with its free credit")
}
