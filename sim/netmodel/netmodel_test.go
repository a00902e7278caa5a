package netmodel

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWorldWideSpread(t *testing.T) {
	m, err := WorldWide(8, 5*time.Millisecond, 150*time.Millisecond)
	require.NoError(t, err)
	require.False(t, m.RedisRTT[0] != 5*time.Millisecond || m.RedisRTT[7] != 150*time.Millisecond, "RTTs %v, want 5ms..150ms", m.RedisRTT)
	require.False(t, m.OneWay[0][4] != 75*time.Millisecond || m.OneWay[0][1] <= 0 || m.OneWay[3][3] != 0, "one-way row 0 %v", m.OneWay[0])
	require.EqualValues(t, m.OneWay[5][2], m.OneWay[2][5], "one-way delays are not symmetric")
	_, err = WorldWide(0, 0, 0)
	require.Error(t, err, "zero PoPs accepted")
}
