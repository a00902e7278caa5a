package hybrid

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/gossip"
	"github.com/edgelimit/edgelimit/sync/reconcile"
)

// hostileIDs are identities that break naive key layouts or wire formats.
var hostileIDs = []string{
	"{user}:42", "user:42", "}", "}{", "{", "a}:5", "a", "k:a", "x:61", "\x00", "a\x00b",
	"\xff\xfe\xfd", "caf\xc3", " ", "*", ">", "el.edgelimit.gossip.v1",
	strings.Repeat("{}:", core.MaxKeyLen/3), strings.Repeat("\xff", core.MaxKeyLen),
}

// TestHostileIdentities: identities with braces, colons, NUL bytes,
// invalid UTF-8 and the maximum length are counted apart, reconciled to
// distinct Redis keys and gossiped intact between two PoPs, every count
// exact; 10 KB (and MaxKeyLen+1) identities are rejected with
// core.ErrKeyTooLong by AllowN, Peek and Reset, write nothing to Redis and
// send nothing by gossip; gossip naming such an identity is ignored.
func TestHostileIdentities(t *testing.T) {
	e := newEnv(t, true)
	a, b := e.node("a", nil), e.node("b", nil)
	ctx := context.Background()
	now := e.clock.Now()
	for i, id := range hostileIDs {
		for j := 0; j <= i; j++ {
			mustAllow(t, a, id, now)
		}
	}
	mustSync(t, a, now)
	if err := a.Gossip(now); err != nil {
		t.Fatal(err)
	}
	flushNATS(t, a.cfg.NATS)
	idx := e.idx(a)
	keys := map[string]string{}
	for i, id := range hostileIDs {
		want := int64(i + 1)
		if got, _ := a.Counts(id, now); got != want {
			t.Fatalf("id %q: a's view %d, want %d", id, got, want)
		}
		if got := e.redisTotal("el", id, idx); got != want {
			t.Fatalf("id %q: Redis %d, want %d", id, got, want)
		}
		waitFor(t, "gossip of "+id[:min(len(id), 8)], func() bool { c, _ := b.Counts(id, now); return c == want })
		k := reconcile.Key("el", id, idx)
		if other, dup := keys[k]; dup {
			t.Fatalf("ids %q and %q share key %q", other, id, k)
		}
		keys[k] = id
	}
	dbBefore := e.rdb.DBSize(ctx).Val()
	sentBefore := a.Stats().GossipSent
	for _, long := range []string{strings.Repeat("x", 10<<10), strings.Repeat("{", core.MaxKeyLen+1), ""} {
		want := core.ErrKeyTooLong
		if long == "" {
			want = core.ErrEmptyKey
		}
		if _, err := a.AllowN(ctx, long, now, 1); !errors.Is(err, want) || !errors.Is(err, core.ErrInvalid) {
			t.Fatalf("AllowN(len %d): %v, want %v", len(long), err, want)
		}
		if _, err := a.Peek(ctx, long, now); !errors.Is(err, want) {
			t.Fatalf("Peek(len %d): %v", len(long), err)
		}
		if err := a.Reset(ctx, long); !errors.Is(err, want) {
			t.Fatalf("Reset(len %d): %v", len(long), err)
		}
		a.ApplyGossip(gossip.Message{PoP: "x#1", SentAt: now, WindowMillis: a.w,
			Entries: []gossip.Entry{{Key: long, Window: idx, Count: 5}}}, now)
		if c, _ := a.Counts(long, now); c != 0 {
			t.Fatalf("gossip for a len %d identity counted %d", len(long), c)
		}
	}
	mustSync(t, a, now)
	if err := a.Gossip(now); err != nil {
		t.Fatal(err)
	}
	if got := e.rdb.DBSize(ctx).Val(); got != dbBefore {
		t.Fatalf("rejected identities changed Redis: %d keys, was %d", got, dbBefore)
	}
	if got := a.Stats().GossipSent; got != sentBefore {
		t.Fatalf("rejected identities were gossiped (%d payloads)", got-sentBefore)
	}
	if got := a.cache.Len(); got != len(hostileIDs) {
		t.Fatalf("view holds %d identities, want %d (nothing for rejected ones)", got, len(hostileIDs))
	}
}
