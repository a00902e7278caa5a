package hybrid

import (
	"context"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// ms is now in milliseconds on the Node's window clock: the caller's time
// plus the offset to Redis' clock learned by Syncs (Config.RedisClock; 0
// otherwise). Every time handed to the Node goes through it, so windows,
// decisions and counts are on one clock across PoPs.
func (n *Node) ms(now time.Time) int64 { return core.Millis(now) + n.offset.Load() }

// ClockOffset is what the Node adds to its Clock's times to read Redis'
// clock: 0 without Config.RedisClock or before the first Sync (or
// SyncClock).
func (n *Node) ClockOffset() time.Duration {
	return time.Duration(n.offset.Load()) * time.Millisecond
}

// learnOffset takes one sample of Redis' clock from a batch: Redis read
// server (ms) between sent and recv (ms, this PoP's own Clock), so, as NTP
// does, its clock minus ours is server − (sent+recv)/2, wrong by at most
// half the round trip's asymmetry. The latest sample replaces the last.
func (n *Node) learnOffset(server, sent, recv int64) {
	if !n.cfg.RedisClock || server <= 0 || recv < sent {
		return
	}
	n.offset.Store(server - (sent+recv)/2)
	n.clockKnown.Store(true)
}

// SyncClock learns the offset to Redis' clock now, from one TIME call
// (Config.RedisClock; without it it does nothing and returns nil). A Sync
// or Flush that sent nothing to learn it from makes it as long as no
// offset has been learned, so one Sync before serving is enough; Syncs
// that send batches learn it from them.
// On failure it returns a *core.UnavailableError and the offset stays
// what it was.
func (n *Node) SyncClock(ctx context.Context) error {
	if !n.cfg.RedisClock {
		return nil
	}
	sent := core.Millis(n.cfg.Clock.Now())
	n.st.roundTrips.Add(1)
	t, err := n.cfg.Redis.Time(ctx).Result()
	if err != nil {
		n.st.redisErrors.Add(1)
		return &core.UnavailableError{Op: "redis time", Err: err}
	}
	n.learnOffset(t.UnixMilli(), sent, core.Millis(n.cfg.Clock.Now()))
	return nil
}

// SetServerTime overrides the time Redis' clock read when c ran (ms), for a
// driver whose Redis does not run on the clock it simulates (pop-sim's
// virtual time). It applies to a Sync batch made by Exec; otherwise it
// does nothing.
func (c *Call) SetServerTime(ms int64) {
	if c.kind != callFlush || c.err != nil {
		return
	}
	for i := range c.res {
		c.res[i].ServerMillis = ms
	}
}
