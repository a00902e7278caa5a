package budget

import (
	"errors"
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// ErrConfig is wrapped by every error New and NewMachine return for a
// Config they refuse; test with errors.Is. A refused Limit's error also
// matches core.ErrInvalid (core.Limit.Validate's error, or
// core.ErrBadAlgorithm for an algorithm other than the sliding window
// counter).
var ErrConfig = errors.New("budget: invalid config")

// MaxPoPLen bounds Config.PoP, in bytes: the PoP's name, '#' and its
// incarnation name it in gossip (Machine.ID), within
// gossip.MaxSenderLen.
const MaxPoPLen = 64

// Config configures a Machine (and a Limiter). The zero value is not valid:
// PoP, Limit and PoPs must be set; every other field has a default.
type Config struct {
	PoP         string     // this PoP's name (required, 1..MaxPoPLen bytes)
	Incarnation uint64     // this process' random incarnation; 0 is refused by NewMachine (New draws one)
	Limit       core.Limit // units per window (required; the sliding window counter)
	PoPs        int        // the deployment's number of PoPs, P (required, ≥ 1)
	FreeCredit  int64      // c: units a PoP admits of an identity per window unasked; 0 means 1
	Namespace   string     // key prefix; "" means "el"
	Buckets     int        // identity buckets, one Redis hash per bucket and two windows: size for ≈ 100 identities with Redis state each (only identities past their free credit have any); 0 means 1024
	Groups      int        // hash tags buckets spread over (one Sync call each); 0 means 1, or 16 on a Redis Cluster client (New)
	FailClosed  bool       // deny what the budget cannot cover while Redis is down
	// NoWait is the one policy choice: false (the zero value, accuracy
	// first) sends a request no grant or free credit covers to Redis
	// unless Redis' last reply left its identity no headroom, so a client
	// near its limit is served as pure Redis serves it, at the price of a
	// round trip for such requests; true (latency first) denies it here
	// once Redis has said the identity has under a quarter of its limit
	// left, and lets the next Sync ask a grant; a calm identity's Sync
	// then also asks a grant ahead of its next request (Redis work per
	// identity seen, bought for latency). Clients near their limit lose
	// a tenth or more of their quota (docs/budget.md has both measured).
	NoWait bool
	// SyncInterval is the time between Syncs (Limiter's ticker, and the
	// demand horizon of a grant); 0 means 100 ms.
	SyncInterval time.Duration
	// RTT is the expected round trip to Redis, added to the grant horizon;
	// 0 means 50 ms.
	RTT time.Duration
	// ExpirySlack is added to every Redis key's expiry; 0 means 1 s.
	ExpirySlack time.Duration
}

// withDefaults returns c with its defaults filled in, or an error wrapping
// ErrConfig.
func (c Config) withDefaults() (Config, error) {
	switch {
	case c.PoP == "" || len(c.PoP) > MaxPoPLen:
		return c, fmt.Errorf("%w: PoP %q is not 1..%d bytes", ErrConfig, c.PoP, MaxPoPLen)
	case c.Limit.Validate() != nil:
		return c, fmt.Errorf("%w: Limit %+v: %w", ErrConfig, c.Limit, c.Limit.Validate())
	case c.Limit.Algorithm != core.SlidingWindow:
		return c, fmt.Errorf("%w: Limit %+v: the budget limiter runs the sliding window counter only: %w", ErrConfig, c.Limit, core.ErrBadAlgorithm)
	case c.PoPs < 1:
		return c, fmt.Errorf("%w: PoPs is %d, want the deployment's number of PoPs (≥ 1)", ErrConfig, c.PoPs)
	case c.FreeCredit < 0 || c.Buckets < 0 || c.Groups < 0 || c.SyncInterval < 0 || c.RTT < 0 || c.ExpirySlack < 0:
		return c, fmt.Errorf("%w: negative FreeCredit, Buckets, Groups, SyncInterval, RTT or ExpirySlack", ErrConfig)
	}
	if c.FreeCredit == 0 {
		c.FreeCredit = 1
	}
	if 2*c.FreeCredit*int64(c.PoPs) > c.Limit.Max {
		return c, fmt.Errorf("%w: 2 × FreeCredit × PoPs = %d exceeds Limit.Max %d (free credit alone would pass the limit)",
			ErrConfig, 2*c.FreeCredit*int64(c.PoPs), c.Limit.Max)
	}
	if c.Namespace == "" {
		c.Namespace = "el"
	}
	if c.Buckets == 0 {
		c.Buckets = 1024
	}
	if c.Groups == 0 {
		c.Groups = 1
	}
	if c.SyncInterval == 0 {
		c.SyncInterval = 100 * time.Millisecond
	}
	if c.RTT == 0 {
		c.RTT = 50 * time.Millisecond
	}
	if c.ExpirySlack == 0 {
		c.ExpirySlack = time.Second
	}
	return c, nil
}
