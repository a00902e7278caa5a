package budget

import (
	"errors"
	"fmt"
	"math"
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

// MaxLimit is the largest Limit.Max a Config accepts: core.MaxLimit (2^50;
// Redis' script holds counts as Lua numbers, doubles exact to 2^53, and
// adds C, G, the reserved free credit and a request's units of two
// windows). Limit.Validate refuses a larger one.
const MaxLimit = core.MaxLimit

// MaxPoPs is the largest Config.PoPs accepted (2^21 − 1), and
// MaxFreeCredit the largest Config.FreeCredit (2^32 − 1): Redis' script
// packs a number of PoPs and a credit into one Lua number (PoPs × 2^32 +
// credit: the least PoPs and credit the checks of a window reserved for,
// and, beside it, the incarnations counted and the largest credit
// announced), exact while both fit.
const (
	MaxPoPs       = 1<<21 - 1
	MaxFreeCredit = 1<<32 - 1
)

// MaxGroups is the largest Config.Groups accepted: a Redis Cluster's
// 16,384 hash slots, past which more hash tags spread nothing further (a
// Machine holds a Sync pipeline per group).
const MaxGroups = 16384

// Config configures a Machine (and a Limiter). The zero value is not valid:
// PoP, Limit and PoPs must be set; every other field has a default.
type Config struct {
	PoP         string     // this PoP's name (required, 1..MaxPoPLen bytes)
	Incarnation uint64     // this process' random incarnation; 0 is refused by NewMachine (New draws one)
	Limit       core.Limit // units per window (required; the sliding window counter, Max at most MaxLimit)
	PoPs        int        // the deployment's number of PoPs, P (required, 1..MaxPoPs)
	// FreeCredit is c, the units a PoP admits of an identity per window
	// without asking Redis, its one round-trip-free way to serve an
	// identity it knows nothing of. Redis reserves c × PoPs units of every
	// identity it decides in each of two windows for them, until the PoPs
	// give their slots up (docs/budget.md, "Free credit"). 0, the zero
	// value, chooses (AutoFreeCredit): 1 unit where that reservation
	// costs a contested identity little, else none. A negative value
	// means none: every unit a PoP admits unasked comes from a grant.
	// A value with 2 × FreeCredit × PoPs > Limit.Max, or over
	// MaxFreeCredit, is refused. PoPs
	// may differ in it, and PoPs may undercount the deployment: a PoP
	// spends free credit only once Redis has counted it among the
	// window's spenders, Redis reserves for every PoP it counted, at
	// the largest credit announced, and a PoP spends none in a window
	// Redis decided before counting it unless those decisions' callers
	// reserved for it (lease.go, "the first count"). PoPs of versions
	// before that count spend unannounced, and those before the first
	// count record no decisions: while any runs, give every PoP the same
	// FreeCredit and PoPs (Redis then also reserves the caller's
	// c × PoPs), or move to a new Namespace.
	FreeCredit int64
	// Namespace prefixes every Redis key and the gossip subject (Subject);
	// "" means "el". Keys and subject carry the limit too
	// (Keyspace: "{el:10/1s:g0}:b3:e5"), so one Namespace serves every
	// limit of a route (10 per second with 1000 per hour) without their
	// counts meeting, while Limiters of one and the same limit share their
	// keys: to count two routes of one limit apart, give them distinct
	// Namespaces or identities. Every PoP of a limit must use the same.
	Namespace string
	// Buckets is the number of identity buckets: one Redis hash per
	// bucket and two windows. Size it for about 100 identities with Redis
	// state each (only identities past their free credit have any; a hash
	// holds an identity's field for each of its windows there): fewer
	// fields per hash spread each key's fixed cost over fewer identities
	// (on mixed at 1,000,000 identities, 34,000 with state: 56 B per
	// identity with state at 1024 buckets, 44 B at 256), and a hash past
	// Redis' hash-max-listpack-entries (512 by default, compiled in and in
	// Debian's redis.conf; some deployments set 128) loses its compact
	// encoding. Every PoP must use the same. 0 means 1024; at
	// most math.MaxInt32 (ErrConfig).
	Buckets    int
	Groups     int  // hash tags buckets spread over (one Sync call each); 0 means 1, or 16 on a Redis Cluster client or a type embedding one (New; at most Buckets); over Buckets or MaxGroups is ErrConfig
	FailClosed bool // deny what the budget cannot cover while Redis is down
	// NoWait is the one policy choice: false (the zero value, accuracy
	// first) sends a request no grant or free credit covers to Redis
	// unless Redis' last reply left its identity no headroom, so a client
	// near its limit is served as pure Redis serves it, at the price of a
	// round trip for such requests; true (latency first) denies it here
	// once Redis has said the identity has under a quarter of its limit
	// left and the units known admitted of it reach 3/8 of the limit
	// (below, budget held elsewhere is what leaves it little headroom,
	// and the request goes to Redis), and lets the next Sync ask a
	// grant; a calm identity's Sync
	// then also asks a grant ahead of its next request (Redis work per
	// identity seen, bought for latency). Clients near their limit lose
	// 2–11% of their quota where they spread over PoPs (the more PoPs a
	// client spreads over, the more), 1.4% on one (docs/budget.md has
	// both measured).
	NoWait bool
	// SyncInterval is the time between Syncs (Limiter's ticker, and the
	// demand horizon of a grant); 0 means 100 ms.
	SyncInterval time.Duration
	// RTT is the expected round trip to Redis, added to the grant horizon;
	// 0 means 50 ms. Half of it bounds the first sample of this PoP's
	// one-way delay, the age its decisions at Redis are taken at (a first
	// call that dials or loads the script takes several round trips): set
	// it to at least the real round trip, or the age grows to the real
	// delay by at most an eighth a decision Call.
	RTT time.Duration
	// ExpirySlack is added to every Redis key's expiry; 0 means
	// DefaultExpirySlack.
	ExpirySlack time.Duration
}

// DefaultExpirySlack is Config.ExpirySlack's zero value: what every Redis
// key's expiry gets beyond the last window a request can still be stamped
// in.
const DefaultExpirySlack = time.Second

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
	case c.PoPs < 1 || c.PoPs > MaxPoPs:
		return c, fmt.Errorf("%w: PoPs is %d, want the deployment's number of PoPs (1..%d)", ErrConfig, c.PoPs, MaxPoPs)
	case c.FreeCredit > MaxFreeCredit:
		return c, fmt.Errorf("%w: FreeCredit %d is over %d", ErrConfig, c.FreeCredit, MaxFreeCredit)
	case c.Buckets < 0 || c.Groups < 0 || c.SyncInterval < 0 || c.RTT < 0 || c.ExpirySlack < 0:
		return c, fmt.Errorf("%w: negative Buckets, Groups, SyncInterval, RTT or ExpirySlack", ErrConfig)
	case c.Buckets > math.MaxInt32:
		return c, fmt.Errorf("%w: Buckets %d is over %d", ErrConfig, c.Buckets, math.MaxInt32)
	}
	switch {
	case c.FreeCredit == 0:
		c.FreeCredit = AutoFreeCredit(c.Limit, c.PoPs)
	case c.FreeCredit < 0:
		c.FreeCredit = 0
	}
	if c.FreeCredit > c.Limit.Max/2/int64(c.PoPs) { // 2 × FreeCredit × PoPs > Limit.Max, without overflow
		return c, fmt.Errorf("%w: 2 × FreeCredit × PoPs exceeds Limit.Max %d (FreeCredit %d, PoPs %d: free credit alone would pass the limit)",
			ErrConfig, c.Limit.Max, c.FreeCredit, c.PoPs)
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
	if c.Groups > MaxGroups {
		return c, fmt.Errorf("%w: Groups %d is over %d", ErrConfig, c.Groups, MaxGroups)
	}
	if c.Groups > c.Buckets {
		// a group is a set of buckets under one hash tag: one with none
		// would hold no identity and only renew its free-credit lease
		return c, fmt.Errorf("%w: Groups %d exceeds Buckets %d", ErrConfig, c.Groups, c.Buckets)
	}
	if c.SyncInterval == 0 {
		c.SyncInterval = 100 * time.Millisecond
	}
	if c.RTT == 0 {
		c.RTT = 50 * time.Millisecond
	}
	if c.ExpirySlack == 0 {
		c.ExpirySlack = DefaultExpirySlack
	}
	return c, nil
}

// freeCreditLag is about how long a newly contested identity's reserved
// free slots stay reserved: until every PoP's next Sync has given them up
// (a Sync interval and two round trips at the defaults).
const freeCreditLag = 200 * time.Millisecond

// AutoFreeCredit is the FreeCredit a Config's zero value chooses for limit
// and pops: 1 unit when 2 × pops ≤ limit.Max and the reservation, 2 ×
// pops units of limit.Max held for about 200 ms of each window an
// identity is newly contested in, stays under 1/64 of the limit over its
// window (window × Max ≥ pops × 25.6 s: at 8 PoPs a limit of 100 per 2.05 s
// or more, of 24 per 8.6 s); else 0, none. It reads only the limit and
// the number of PoPs, which every PoP of a deployment shares, so every
// PoP chooses alike.
//
// Measured with pop-sim (8 PoPs, honest network): limit 20 per 1 s at 40,000
// requests a second per PoP with 1 unit, 85.65% of the exact reference was
// served, near-limit clients 55.8%, and 2,697 calm identities were
// wrongly limited; with none 100.94% and 0 (pure Redis 101.02% and 0), at
// 53.5% of round trips saved instead of 54.1%;
// limit 100 per 10 s, 1 unit saves 71.4% of round trips, none 61.8%, at
// the same accuracy.
func AutoFreeCredit(limit core.Limit, pops int) int64 {
	max, w := limit.Max, limit.Window
	if pops < 1 || 2*int64(pops) > max || w <= 0 {
		return 0
	}
	if float64(w)*float64(max) < 128*float64(pops)*float64(freeCreditLag) {
		return 0
	}
	return 1
}
