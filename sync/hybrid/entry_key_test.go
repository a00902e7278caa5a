package hybrid

import (
	"strings"
	"testing"
	"unsafe"
)

// TestEntryOwnsItsKey: a view entry keeps its own copy of the key, inline
// up to inlineKey bytes and cloned beyond, so a caller that reuses its
// buffer changes nothing the view holds.
func TestEntryOwnsItsKey(t *testing.T) {
	for _, size := range []int{1, inlineKey, inlineKey + 1, 300} {
		buf := []byte(strings.Repeat("k", size))
		want := string(buf)
		e := newEntry(unsafe.String(&buf[0], len(buf)), 7, 0)
		for i := range buf {
			buf[i] = 'x'
		}
		if e.key != want {
			t.Fatalf("key of %d bytes: entry holds %q after the caller's buffer changed", size, e.key)
		}
	}
}
