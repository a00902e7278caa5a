package hybrid

import (
	"context"
	"strings"
	"testing"
	"unsafe"

	"github.com/edgelimit/edgelimit/internal/keybuf"
)

// TestEntryOwnsItsKey: a view entry keeps its own copy of the key, inline
// up to keybuf.Inline bytes and cloned beyond, so a caller that reuses its
// buffer changes nothing the view holds.
func TestEntryOwnsItsKey(t *testing.T) {
	for _, size := range []int{1, keybuf.Inline, keybuf.Inline + 1, 300} {
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

// TestViewKeepsItsOwnKey: through AllowN, the view stores its own copy of
// a key, so a caller that reuses its buffer (a zero-copy string over
// request bytes) leaves the view's entries, and Sync, untouched. Before, the
// view kept the caller's string as given.
func TestViewKeepsItsOwnKey(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("pop-a", nil)
	for _, size := range []int{8, keybuf.Inline + 5} {
		buf := []byte(strings.Repeat("u", size))
		want := string(buf)
		for i := 0; i < 3; i++ {
			if _, err := n.AllowN(context.Background(), unsafe.String(&buf[0], len(buf)), t0, 1); err != nil {
				t.Fatal(err)
			}
		}
		for i := range buf {
			buf[i] = 'x'
		}
		if err := n.Sync(context.Background(), t0); err != nil { // empties the pending set
			t.Fatal(err)
		}
		ent, ok := n.cache.Peek(want)
		if !ok || ent.key != want {
			t.Fatalf("key of %d bytes: after the caller's buffer changed the view's LRU holds %v (found %v)", size, ent, ok)
		}
		mustAllow(t, n, want, t0) // the same identity, so the same entry
		if err := n.Sync(context.Background(), t0); err != nil {
			t.Fatal(err)
		}
		if got := e.redisTotal("el", want, e.idx(n)); got != 4 {
			t.Fatalf("key of %d bytes: Redis holds %d for it after 4 hits, want 4", size, got)
		}
	}
}
