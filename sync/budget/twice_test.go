package budget

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFinishTwice: a batch's reply handed to Finish twice (not
// something Limiter does; a caller of the Machine retrying its own
// bookkeeping could) must not add its grant twice.
func TestFinishTwice(t *testing.T) {
	m := newTestMachine(t, func(c *Config) { c.FreeCredit = -1 })
	_, c := m.Request(w0+10, "a", 1)
	require.NotNil(t, c)
	m.Complete(w0+20, c, &Result{Now: w0 + 15, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: 1, Headroom: 1}}}, nil)
	calls := m.Tick(w0 + 100)
	require.Len(t, calls, 1)
	r := &Result{Now: w0 + 110, Window: 1000, Items: make([]ItemResult, len(calls[0].Items))}
	for i := range r.Items {
		r.Items[i] = ItemResult{Allowed: -1, Grant: 2, CW: 1, Headroom: 1}
	}
	m.Finish(calls[0], r, nil)
	m.Finish(calls[0], r, nil)
	assert.Equal(t, int64(2), m.balance(m.view["a"], 1000), "one grant of 2")
}

// TestCompleteTwice: a decision Call's reply handed to Complete twice
// (not something Limiter does; a caller of the Machine retrying its own
// bookkeeping could) changes nothing the second time and returns the
// first Decision: the unit is counted once, the grant added once.
func TestCompleteTwice(t *testing.T) {
	m := newTestMachine(t, func(c *Config) { c.FreeCredit = -1 })
	_, c := m.Request(w0+10, "a", 1)
	require.NotNil(t, c)
	r := &Result{Now: w0 + 15, Window: 1000, Items: []ItemResult{{Allowed: 1, Grant: 2, CW: 1, Headroom: 5}}}
	d1 := m.Complete(w0+20, c, r, nil)
	e := m.view["a"]
	own, bal := e.own, m.balance(e, 1000)
	d2 := m.Complete(w0+30, c, r, nil)
	assert.Equal(t, d1, d2, "the first Decision again")
	assert.Equal(t, own, e.own, "the unit counted once")
	assert.Equal(t, bal, m.balance(e, 1000), "the grant added once")
	assert.Equal(t, int64(2), bal, "one grant of 2")
	assert.Equal(t, int32(0), e.asking, "no Call in flight")
}
