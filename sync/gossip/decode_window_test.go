package gossip

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wrappingWindow is a payload whose second entry's window, base
// math.MaxInt64 plus a delta of 1, is past the largest int64.
func wrappingWindow() []byte {
	m := Message{PoP: "p", WindowMillis: 1000}
	b := appendHeader(nil, &m, math.MaxInt64, 2)
	b = append(b, 1, 'k', 0, 1) // key "k", delta 0, count 1
	return append(b, 1, 'k', 1, 1)
}

// TestDecodeRejectsWindowPastInt64: an entry whose window, the base plus
// its delta, would pass math.MaxInt64 is refused with ErrBadField and no
// message. It wrapped to math.MinInt64 and was returned: a message no
// Marshal accepts (FuzzDecode's re-encoding fails on it, a seed there
// too) and a window no sender can have meant. Mutation it catches: the
// overflow check left out of decodeEntry.
func TestDecodeRejectsWindowPastInt64(t *testing.T) {
	m, err := Decode(wrappingWindow())
	require.ErrorIs(t, err, ErrBadField, "window past MaxInt64 decoded as %+v", m)
	assert.Nil(t, m.Entries, "partial message returned: %+v", m)
	last := Message{PoP: "p", WindowMillis: 1000}
	m, err = Decode(append(appendHeader(nil, &last, math.MaxInt64, 1), 1, 'k', 0, 1))
	require.NoError(t, err, "an entry at window math.MaxInt64 itself is valid")
	require.Equal(t, int64(math.MaxInt64), m.Entries[0].Window)
}
