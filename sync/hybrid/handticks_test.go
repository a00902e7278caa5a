package hybrid

import (
	"sync"
	"time"
)

// handTicks replaces a Node's loop ticker (Node.ticker) so a test ticks
// Start's loops by hand: each ticker the Node asks for is recorded with its
// period, in the order Start asks (Sync's, then Gossip's). tick blocks
// until the loop takes the tick, that is until the loop's previous run is
// over, so ticking a loop twice proves its first run finished.
type handTicks struct {
	mu      sync.Mutex
	periods []time.Duration
	chans   []chan time.Time
}

// install makes n's loops tick by hand; call it before Start.
func (h *handTicks) install(n *Node) { n.ticker = h.ticker }

func (h *handTicks) ticker(d time.Duration) (<-chan time.Time, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := make(chan time.Time)
	h.periods = append(h.periods, d)
	h.chans = append(h.chans, c)
	return c, func() {}
}

// started is the periods of the tickers asked for so far, in order.
func (h *handTicks) started() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.periods...)
}

// tick ticks the i-th ticker asked for once, waiting until its loop takes it.
func (h *handTicks) tick(i int) {
	h.mu.Lock()
	c := h.chans[i]
	h.mu.Unlock()
	c <- time.Time{}
}
