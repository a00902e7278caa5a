package gossip

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEncodeSplitsFarWindows: entries whose windows lie 2^20 or more
// apart, more than one payload's deltas can span, are split over
// payloads, each with its own base window, and all of them decode back
// in order; Encode refused the whole message with ErrBadField. The
// windows at both ends of int64 too. Mutation it catches: one base
// window for every payload of a message.
func TestEncodeSplitsFarWindows(t *testing.T) {
	for _, ws := range [][]int64{
		{1000, 999, 1000 + maxWindowDelta, 999 + maxWindowDelta, 1001},
		{math.MinInt64, math.MaxInt64, 0, math.MaxInt64 - 1},
		{5 + maxWindowDelta - 1, 5, 4}, // a span of exactly maxWindowDelta splits too
	} {
		m := Message{PoP: "p#1", WindowMillis: 1000}
		for i, w := range ws {
			m.Entries = append(m.Entries, Entry{Key: string(rune('a' + i)), Window: w, Count: int64(i + 1)})
		}
		parts, err := Encode(m, 64<<10)
		require.NoError(t, err, "windows %v", ws)
		var all []Entry
		for _, p := range parts {
			d, err := Decode(p)
			require.NoError(t, err, "windows %v", ws)
			all = append(all, d.Entries...)
		}
		require.Equal(t, m.Entries, all, "windows %v: entries after the round trip", ws)
	}
}

// TestMarshalRefusesFarWindows: Marshal, one payload, refuses entries
// whose windows span 2^20 or more with ErrBadField (Encode splits them).
func TestMarshalRefusesFarWindows(t *testing.T) {
	m := Message{PoP: "p", WindowMillis: 1, Entries: []Entry{{Key: "k", Window: 0, Count: 1}, {Key: "k", Window: maxWindowDelta, Count: 1}}}
	_, err := Marshal(m)
	require.ErrorIs(t, err, ErrBadField)
	m.Entries[1].Window--
	_, err = Marshal(m)
	require.NoError(t, err, "a span of 2^20 − 1 windows fits one payload")
}
