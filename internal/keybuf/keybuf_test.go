package keybuf

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestOwnCopies: for lengths around Inline, Own returns a string equal to
// the key that a caller rewriting its buffer does not change, held inside
// the Buf exactly when it fits.
func TestOwnCopies(t *testing.T) {
	for _, size := range []int{0, 1, Inline - 1, Inline, Inline + 1, 300} {
		buf := []byte(strings.Repeat("k", size+1))[:size]
		want := string(buf)
		key := unsafe.String(unsafe.SliceData(buf), size)
		var b Buf
		got := b.Own(key)
		for i := range buf {
			buf[i] = 'x'
		}
		require.Equal(t, want, got, "key of %d bytes: Own gave %q after the caller's buffer changed, want %q", size, got, want)
		inside := size > 0 && unsafe.StringData(got) == &b[0]
		require.Equal(t, size > 0 && size <= Inline, inside, "key of %d bytes: held in the Buf %v, want %v", size, inside, size <= Inline)
	}
}
