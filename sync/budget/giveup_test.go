package budget

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNewIdentityGivesUpAhead: a decision Call about an identity this PoP
// first saw less than a Sync interval and a round trip ago gives up this
// PoP's free slots of the next giveUpAhead windows (a crowd's identities
// are new everywhere, and every PoP's slots Redis reserves ahead hold back
// units the crowd's requests at Redis would use); a settled identity's
// Call keeps them unless Redis last called it contested, since far from
// the limit a reserved slot costs no one and the identity's first request
// of the next window is then free rather than a round trip. Caught
// mutations: no decision Call giving up ahead (pop-sim's crowd of 10× the
// limit within 100 ms: 97.7% of pure Redis' quota instead of 100%), every
// decision Call giving up ahead (calm identities waited 12–26% more round
// trips on pop-sim's lines), a contested settled identity keeping its
// slots, a Call with nothing to report taking a number of the reports'
// sequence.
func TestNewIdentityGivesUpAhead(t *testing.T) {
	x := int64(w0 / testWindow)
	for name, tc := range map[string]struct {
		firstAt  int64 // the identity's first (free) request
		headroom int64 // Redis' word about it in window x−1; -1: none
		ahead    bool  // the Call in x gives up x+1 and x+2
	}{
		"new":                {firstAt: w0 + 100, headroom: -1, ahead: true},
		"settled":            {firstAt: w0 + 10, headroom: -1, ahead: false},
		"settled, calm":      {firstAt: w0 - testWindow + 10, headroom: 8, ahead: false},
		"settled, contested": {firstAt: w0 - testWindow + 10, headroom: 1, ahead: true},
	} {
		t.Run(name, func(t *testing.T) {
			m := newTestMachine(t, nil) // limit 10: contested under 2.5 of headroom
			d, c := m.Request(tc.firstAt, "k", 1)
			require.Nil(t, c)
			require.Equal(t, SrcFree, d.Source)
			if tc.headroom >= 0 {
				// a second unit in x−1, 300 ms later (settled): Redis
				// decides it and tells the headroom
				at := tc.firstAt + 300
				_, c = m.Request(at, "k", 1)
				require.NotNil(t, c)
				require.NotContains(t, c.Items[0].Claims, x, "settled, no word yet: x's slot kept")
				d = m.Complete(at+1, c, &Result{Now: at, Window: x - 1, Items: []ItemResult{{Allowed: 1, CW: 2, Headroom: tc.headroom}}}, nil)
				require.True(t, d.Allowed)
				d, c = m.Request(w0+10, "k", 1)
				require.Nil(t, c)
				require.Equal(t, SrcFree, d.Source, "x's first unit: free")
			}
			_, c = m.Request(w0+200, "k", 1)
			require.NotNil(t, c, "the window's free unit is spent: a decision Call")
			if tc.ahead {
				assert.Subset(t, c.Items[0].Claims, []int64{x + 1, x + 2}, "the Call gives up the next two windows' slots")
			} else {
				assert.NotContains(t, c.Items[0].Claims, x+1, "the Call keeps the next window's slot")
				assert.NotContains(t, c.Items[0].Claims, x+2, "and the one after")
				// the next Call has nothing to report: it takes no number
				// of the reports' sequence (a place in its window)
				m.Complete(w0+201, c, &Result{Now: w0 + 200, Window: x, Items: []ItemResult{{Allowed: 1, CW: 3, Headroom: 7}}}, nil)
				_, c = m.Request(w0+300, "k", 1)
				require.NotNil(t, c)
				assert.Empty(t, c.Items[0].Claims)
				assert.Empty(t, c.Items[0].Ops)
				assert.Zero(t, c.Seq, "nothing to report, no number")
			}
		})
	}
}
