package hybrid

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// handover is two PoPs, a and b, on one identity "k" (limit 100 per 10 s,
// margin 0.5, fail closed), with Escrow or Owners, and the units they
// admitted: the fixture of the hand-over tests below. Every step moves the
// clock 10 ms, so all steps fit in one window.
type handover struct {
	t        *testing.T
	e        *env
	a, b     *Node
	now      time.Time
	admitted int
}

func newHandover(t *testing.T, owners bool, mods ...func(*Config)) *handover {
	e := newEnv(t, false)
	cfg := func(c *Config) {
		c.Margin, c.Owners, c.Escrow, c.FailClosed = 0.5, owners, !owners, true
		for _, m := range mods {
			m(c)
		}
	}
	return &handover{t: t, e: e, a: e.node("pa", cfg), b: e.node("pb", cfg), now: t0}
}

func (h *handover) tick() { h.now = h.now.Add(10 * time.Millisecond); h.e.clock.Set(h.now) }

// allow asks n for one unit of "k", counting it when admitted.
func (h *handover) allow(n *Node, times int) {
	h.t.Helper()
	for range times {
		h.tick()
		d, err := n.AllowN(context.Background(), "k", h.now, 1)
		if err != nil && !errors.Is(err, core.ErrUnavailable) {
			h.t.Fatal(err)
		}
		if d.Allowed {
			h.admitted++
		}
	}
}

func (h *handover) sync(n *Node) {
	h.t.Helper()
	h.tick()
	if err := n.Sync(context.Background(), h.now); err != nil {
		h.t.Fatal(err)
	}
}

// contest makes a own "k" past the margin, then b ask for it (denied
// while a owns), so a's next Sync releases it.
func (h *handover) contest() {
	h.t.Helper()
	h.allow(h.a, 60)
	h.sync(h.a)
	if !grantOwner(h.a) {
		h.t.Fatalf("a does not own (stats %+v)", h.a.Stats())
	}
	h.allow(h.a, 10)
	h.allow(h.b, 1) // far below on b's empty view: admitted locally
	h.sync(h.b)     // b's view learns a's count
	h.sync(h.a)     // renews; a's view learns b's unit
	h.allow(h.a, 1)
	h.allow(h.b, 40) // denied, a owns: b asks
	h.sync(h.b)
}

// flood has both PoPs ask for more than the limit leaves, b syncing in
// between, and requires the PoPs together to stay within the limit.
func (h *handover) flood() {
	h.t.Helper()
	h.allow(h.a, 30)
	h.allow(h.b, 40)
	h.sync(h.b)
	h.allow(h.b, 40)
	if h.admitted > 100 {
		h.t.Fatalf("admitted %d units in one window of a limit of 100", h.admitted)
	}
}

// TestLostReleaseKeepsOthersOut: the owner's Sync reaches Redis, which
// releases it because b asked, but the reply is lost (Fail after Exec: a
// timeout, a cut link), so a still believes it owns. a's next Sync reaches
// Redis while a goes on admitting as owner until that reply arrives; that
// Sync was read while a believed it owned, so the record must stay
// released and b get nothing. A script that turned the record plain there
// handed b the room a was spending: 127–129 units admitted of 100.
func TestLostReleaseKeepsOthersOut(t *testing.T) {
	for _, owners := range []bool{false, true} {
		t.Run(map[bool]string{false: "escrow", true: "owners"}[owners], func(t *testing.T) {
			h := newHandover(t, owners)
			h.contest()
			ctx := context.Background()
			r1 := h.a.BeginSync(h.now) // Redis releases a; the reply is lost
			c1 := r1.Next(0)
			h.a.Exec(ctx, c1)
			h.a.Fail(c1, errors.New("reply lost"))
			_ = r1.Finish(c1)
			h.tick()
			r2 := h.a.BeginSync(h.now) // reaches Redis; its reply is slow
			c2 := r2.Next(0)
			h.a.Exec(ctx, c2)
			h.flood()
			if err := r2.Finish(c2); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestOverlappingSyncsKeepOthersOut: two of a's Syncs in flight carry
// "k" (a caller's Sync beside Start's loop, or a driver's two rounds);
// both were read while a owned it. The first releases a; the second must
// leave the record released, since a admits as owner until a reply tells
// it otherwise.
func TestOverlappingSyncsKeepOthersOut(t *testing.T) {
	for _, owners := range []bool{false, true} {
		t.Run(map[bool]string{false: "escrow", true: "owners"}[owners], func(t *testing.T) {
			h := newHandover(t, owners)
			h.contest()
			ctx := context.Background()
			r1 := h.a.BeginSync(h.now)
			c1 := r1.Next(0)
			h.allow(h.a, 1) // queues "k" again
			r2 := h.a.BeginSync(h.now)
			c2 := r2.Next(0)
			if c1 == nil || c2 == nil {
				t.Fatal("no overlapping batches")
			}
			h.a.Exec(ctx, c1) // releases a
			h.a.Exec(ctx, c2)
			h.flood()
			for _, f := range []func() error{func() error { return r1.Finish(c1) }, func() error { return r2.Finish(c2) }} {
				if err := f(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestReleasedOwnerSyncsAgain: after the reply that released it, the
// owner gets no further request for "k", yet its next Sync must carry
// the identity (the Node queues it, even with its pending set full), so
// Redis hears what it admitted as owner and b gets room at its next ask;
// without that Sync b would wait until the released record expired.
func TestReleasedOwnerSyncsAgain(t *testing.T) {
	h := newHandover(t, false, func(c *Config) { c.MaxPending = 1 })
	h.contest()
	r := h.a.BeginSync(h.now) // releases a
	c := r.Next(0)
	h.a.Exec(context.Background(), c)
	h.tick()
	if _, err := h.a.AllowN(context.Background(), "z", h.now, 1); err != nil { // fills the pending set
		t.Fatal(err)
	}
	if err := r.Finish(c); err != nil {
		t.Fatal(err)
	}
	if grantOwner(h.a) {
		t.Fatal("a still owns after b asked")
	}
	h.sync(h.a) // carries "k" with no new hit: reports, record turns plain
	h.allow(h.b, 1)
	h.sync(h.b)
	if got := grantOf(h.b); got == 0 {
		t.Fatalf("b granted nothing after a's release and report (stats a %+v b %+v)", h.a.Stats(), h.b.Stats())
	}
}
