package core

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLimitKeyText: Max and the window in the window's largest exact unit,
// one spelling per window and distinct spellings for distinct windows
// (every window up to three days, stepped, and its rounding to s, m and
// h), nothing a key must not hold. Two limits sharing a text would share
// Redis keys.
func TestLimitKeyText(t *testing.T) {
	for _, tc := range []struct {
		l    Limit
		want string
	}{
		{PerWindow(10, time.Second), "10/1s"},
		{PerWindow(1000, time.Hour), "1000/1h"},
		{PerWindow(7, 1500*time.Millisecond), "7/1500ms"},
		{PerWindow(5, 90*time.Second), "5/90s"},
		{PerWindow(1, 7*24*time.Hour), "1/7d"},
		{PerWindow(1, 24*time.Hour+time.Minute), "1/1441m"},
	} {
		assert.Equal(t, tc.want, tc.l.KeyText(), "%s", tc.l)
	}
	windows := map[string]int64{}
	for w := int64(1); w <= 3*86_400_000; w += 1 + w/1000 {
		for _, x := range []int64{w, w - w%1000, w - w%60_000, w - w%3_600_000} {
			if x <= 0 {
				continue
			}
			s := PerWindow(1, time.Duration(x)*time.Millisecond).KeyText()
			require.False(t, strings.ContainsAny(s, "{}: "), "%q holds a brace, colon or space", s)
			if prev, dup := windows[s]; dup {
				require.Equal(t, prev, x, "windows %d and %d ms both spelled %q", prev, x, s)
			}
			windows[s] = x
		}
	}
}
