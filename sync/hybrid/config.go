package hybrid

import (
	"fmt"
	"strings"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/nats-io/nats.go"
	goredis "github.com/redis/go-redis/v9"
)

// ErrBadConfig is matched (errors.Is) by every configuration error New
// returns; it matches core.ErrInvalid too.
var ErrBadConfig = fmt.Errorf("%w: bad hybrid config", core.ErrInvalid)

// Defaults applied by New to zero fields.
const (
	DefaultNamespace   = "el"
	DefaultLease       = 2 * time.Second
	DefaultBatchSize   = 256
	DefaultSyncDepth   = 8
	DefaultCapacity    = 100_000
	DefaultGossipBytes = 64 << 10
	DefaultRedisRetry  = 500 * time.Millisecond
	MaxPoPLen          = 64
	maxNamespaceLen    = 64
	maxInbox           = 1 << 16
)

// Intervals of Start's background loops.
const (
	// DefaultSyncInterval is the Sync period Start uses for a zero interval.
	DefaultSyncInterval = 100 * time.Millisecond
	// DefaultGossipInterval is the Gossip period Start uses for a zero
	// interval.
	DefaultGossipInterval = 100 * time.Millisecond
	// LoopOff, passed to Start as an interval, leaves that loop off (any
	// negative interval does).
	LoopOff time.Duration = -1
)

// Config configures a Node. The zero value is invalid: PoP, Limit and Redis
// are required; every other zero field takes the documented default.
type Config struct {
	PoP   string     // unique PoP id, 1..64 bytes
	Limit core.Limit // SlidingWindow only; others give core.ErrBadAlgorithm
	// Redis is required. The Node sets no timeout of its own: a
	// Redis-decided Allow waits as long as its ctx allows, Sync and Close
	// as theirs (Start's loops pass a ctx without deadline), and a call to
	// a Redis that does not answer at most the client's ReadTimeout. go-redis
	// applies a ctx deadline to a Redis that accepts connections but does
	// not answer only when the client has ContextTimeoutEnabled: true;
	// without it such a call waits the client's ReadTimeout (5 s by
	// default) whatever the ctx, while a refused connection fails by the
	// deadline either way (measured on go-redis v9.23 against a stopped
	// and a killed redis-server, ctx deadline 100 ms: 5.0 s and 0.1 s
	// without it, 0.1 s and 0.1 s with it). So build the client with
	// ContextTimeoutEnabled, a short ReadTimeout, DialTimeout and
	// DialerRetries (see the README), and give Allow a ctx with a deadline.
	Redis goredis.UniversalClient
	// NATS carries gossip; nil = gossip off. Build it with gossip.Connect
	// (or nats.Connect with gossip.ConnectOptions): reconnect forever,
	// start while NATS is down, buffer publishes while disconnected.
	// nats.go's defaults give up after 60 reconnects, and a connection
	// that gave up never gossips again. The caller closes it, after Close.
	NATS      *nats.Conn
	Namespace string // Redis key prefix and NATS subject namespace; default "el"; no braces, spaces or wildcards
	// Margin is the headroom: a request is decided at Redis when the local
	// estimate + n > (1-Margin)*Max. 0 = pure local-first; must be in [0, 1).
	Margin float64
	// Escrow (experimental) replaces the Redis round trip of a request
	// within Margin of the limit by escrowed allowances: each Sync asks
	// Redis for units this PoP may admit without asking, sized by its
	// demand, and Redis grants only while the global sliding estimate plus
	// every PoP's outstanding allowance stays within the limit (see the
	// package doc and lua/hybrid_escrow.lua). A request within the margin
	// is admitted from the allowance, or else denied locally and its
	// identity queued so the next Sync asks for one: no decision waits for
	// Redis. A PoP that alone sends an identity becomes its sole holder
	// and decides it on its own exact counts (package doc). It needs
	// Margin > 0 (New refuses Escrow with Margin 0). Lease is how long a
	// grant or an ownership lasts unless renewed (default 2 s).
	Escrow bool
	Lease  time.Duration
	// Owners keeps the margin's round trip to Redis, but not for an
	// identity this PoP alone sends: each Sync of an identity that had a
	// request within the margin asks Redis to make this PoP its sole
	// holder, which Redis does while no other PoP has counted it or asked
	// for it (see Escrow, which has sole holders too, and the package
	// doc). A sole holder decides within the margin on its own view, whose
	// count of itself is exact and of the others is Redis', as a lone
	// limiter would: no round trip (Stats.EscrowOwned). Every other request
	// within the margin is decided at Redis as without Owners, by a script
	// that also denies while another PoP owns the identity and makes that
	// PoP release it. It needs Margin > 0, and neither Escrow (which has
	// it) nor CalmShare (ownership weighs what Redis holds). Lease applies,
	// and PoP clocks must agree within a lease (else use RedisClock), as
	// with Escrow.
	Owners bool
	// RedisClock keeps the Node's windows on Redis' clock: every Sync
	// batch reads Redis TIME in its script, and the Node adds the offset it
	// learns (as NTP does: Redis' reading minus the midpoint of the round
	// trip, by this PoP's Clock) to every time it is handed, so PoPs whose
	// clocks disagree still count and decide in the same windows. Until an
	// offset is learned it is 0, and a Sync (or Flush) with nothing to
	// send asks Redis' TIME instead, so Sync once (or call SyncClock)
	// before serving: learning an offset is a clock step, and
	// units counted before it on a clock off by more than a window are then
	// behind the view and not kept (see the package doc on windows). Start
	// does not wait for it. Needs Redis ≥ 5 (TIME in a script that writes).
	// See ClockOffset.
	RedisClock bool
	// PoPs is how many PoPs may admit one identity at the same time; with
	// it set (above 1) the margin also covers what the view cannot know
	// yet: a request counts as within the margin when the view's estimate
	// plus (PoPs − 1) × this PoP's own units that Redis has not yet
	// acknowledged would be, so when every PoP admits an identity as fast
	// as this one (a flash crowd), a PoP whose view is stale hands it to
	// Redis (or to its allowance) before the PoPs together pass the
	// margin. 0 or 1 = off: only the view's estimate (the exposure is then
	// every PoP's hits since its last reconcile). Must not be negative.
	PoPs int
	// CalmShare keeps calm identities out of Redis (needs NATS; not with
	// Escrow). A unit admitted locally with the identity's estimate, after
	// it, at most CalmShare × Limit.Max reaches the other PoPs by gossip
	// only: Syncs and the periodic re-send carry the identity only once its
	// estimate here has passed that share (then with every own count), and
	// Flush and Close carry every own count Redis lacks. A Redis-decided
	// request already weighs the caller's view of the other PoPs, which
	// gossip keeps. What it costs: Redis does not hold those units until
	// then (and never, once their windows pass), so a PoP that misses the
	// gossip and a crash (its calm units were never in Redis; the other
	// PoPs' views keep them, from gossip, until their windows pass) count
	// up to CalmShare × Limit.Max units less of an identity per PoP that
	// admitted it calmly: P PoPs cut from each other's gossip at once may
	// let P × CalmShare × Limit.Max units pass before one of them turns to
	// Redis. While this Node's NATS connection is down it keeps nothing out
	// of Redis; a PoP connected while its peers' gossip is lost (a NATS
	// partition) is the case that remains. Measured in docs/tradeoffs.md §4
	// ("Calm identities out of Redis"). 0 = off; must be below 1 − Margin
	// (a calm unit is never one the margin would decide at Redis).
	CalmShare float64
	BatchSize int // identities per reconcile batch (one script call); default 256
	// SyncDepth is how many batches of one Sync may be in flight at once
	// to one Redis node; Sync sends them in one pipeline, so one round trip
	// carries up to SyncDepth × BatchSize identities. A Sync's throughput
	// to a node is that many identities per round trip: with one batch in
	// flight, a PoP 150 ms from Redis reconciles at most ~1,700 identities
	// a second, and a PoP touching more than that falls behind for good
	// (its hits wait ever longer, and those older than the previous window
	// when their turn comes are dropped, never reaching Redis). 0 =
	// DefaultSyncDepth (8); 1 sends one batch after the other.
	SyncDepth int
	// SyncShare is the most of one Redis node's time a Sync with several
	// pipelines (of SyncDepth batches) for it may take: after a pipeline
	// that took d, the next one to that node waits d × (1 − SyncShare) /
	// SyncShare, leaving the node to its other clients meanwhile (each
	// batch is one script holding Redis' single thread). 0 =
	// DefaultSyncShare (0.5); 1 = no pause; must be in [0, 1]. A Sync of
	// few identities (one pipeline per node) never waits, nor does the
	// final flush of Close.
	SyncShare  float64
	MaxPending int // identities with unsent hits kept (per Redis and per gossip); default Capacity
	// FailClosed: Redis unreachable for a Redis-decided request, deny it
	// (core.SourceFailClosed) instead of deciding it from the view (see the
	// package doc on outages). Either way the decision comes with a
	// *core.UnavailableError, so a caller may override it: behind package
	// middleware, WithFailMode(FailOpen) serves such a request even though
	// FailClosed denied it, and FailClosed there answers 503 to one the
	// view admitted; only the default FailAsLimiter keeps this choice.
	FailClosed bool
	// ManualGossip queues received gossip for TakeGossip instead of applying
	// it on arrival.
	ManualGossip bool
	// Clock is the time Allow decides at; default core.SystemClock. It is
	// read as milliseconds when core.MilliClockOf accepts it, else through
	// Now. The caller owns it: Close does not stop a core.CoarseClock.
	Clock    core.Clock
	Capacity int // LRU capacity of the view, in identities, split evenly over its shards (see viewLRU); default 100,000
	// RedisRetry is how long Redis-decided requests for the identities of
	// one Redis node (a cluster master, or the one Redis) are decided
	// without trying it after it failed; a successful Sync or decision at
	// that node clears it sooner. Default 500ms.
	RedisRetry time.Duration
	// Resync is how often every identity with counts in live windows is
	// re-sent to Redis (anti-entropy, heals a Redis that restarted empty
	// unseen); 0 = one window, negative = never.
	Resync time.Duration
	// GossipBytes bounds one gossip payload; default 64 KiB.
	GossipBytes int
	// GossipCap (f) bounds what gossip alone can make this PoP believe:
	// for one identity in one window, what the view counts above what Redis
	// last reported, summed over every sender (sender ids cost nothing to
	// invent), is at most f × Limit.Max units; a claim beyond that is
	// ignored and counted in Stats.GossipClamped, and the next reconcile
	// brings the true values. The correct PoPs together admit about
	// Limit.Max units of an identity per window, so the default, 1, clamps
	// correct peers only once gossip alone already puts the window at the
	// limit, and stops absurd counts; below 1/2 lying or buggy PoPs, however
	// many ids they gossip under, cannot exhaust any identity's budget, at
	// the price of under-counting correct peers' unreconciled hits beyond
	// f × Limit.Max per window (see the package doc). 0 = 1; must be in
	// [0, 1].
	GossipCap float64
	// ExpirySlack is added to the TTL of every Redis hash this Node writes
	// (two windows after the last write). Default (0): the Redis call
	// timeout, the client's ReadTimeout (DefaultCallTimeout when it has none
	// or is not a go-redis Client, ClusterClient or Ring), as backends/redis
	// does: a Sync or decision stamped inside a window may reach Redis up
	// to that long after its stamp, and must still find the window's hash
	// (other PoPs' counts) rather than count from zero. Raise it when PoP
	// clocks disagree by more than a window, or when the Node is driven with
	// a virtual clock slower than the wall clock Redis expires keys by (a
	// simulator: at least the wall time the simulation of two windows may
	// take). Must not be negative.
	ExpirySlack time.Duration
	// AuditRate is the fraction of local decisions (core.SourceLocal and
	// core.SourceCachedDeny) checked later against Redis' authoritative
	// counts, off the hot path (see Node.Audit; results in Stats.Audit*).
	// 0 = off; must be in [0, 1].
	AuditRate float64
}

func (c *Config) setDefaults() {
	if c.Namespace == "" {
		c.Namespace = DefaultNamespace
	}
	if c.Lease <= 0 {
		c.Lease = DefaultLease
	}
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.SyncDepth <= 0 {
		c.SyncDepth = DefaultSyncDepth
	}
	if c.Capacity <= 0 {
		c.Capacity = DefaultCapacity
	}
	if c.MaxPending <= 0 {
		c.MaxPending = c.Capacity
	}
	if c.Clock == nil {
		c.Clock = core.SystemClock{}
	}
	if c.RedisRetry <= 0 {
		c.RedisRetry = DefaultRedisRetry
	}
	if c.Resync == 0 {
		c.Resync = c.Limit.Window
	}
	if c.GossipBytes <= 0 {
		c.GossipBytes = DefaultGossipBytes
	}
	if c.GossipCap == 0 {
		c.GossipCap = 1
	}
	if c.SyncShare == 0 {
		c.SyncShare = DefaultSyncShare
	}
	if c.ExpirySlack == 0 && c.Redis != nil {
		c.ExpirySlack = callTimeout(c.Redis)
	}
}

func (c *Config) validate() error {
	if err := c.Limit.Validate(); err != nil {
		return err
	}
	switch {
	case c.Limit.Algorithm != core.SlidingWindow:
		return core.ErrBadAlgorithm
	case c.PoP == "" || len(c.PoP) > MaxPoPLen:
		return fmt.Errorf("%w: PoP must be 1..%d bytes", ErrBadConfig, MaxPoPLen)
	case c.Redis == nil:
		return fmt.Errorf("%w: Redis client required", ErrBadConfig)
	case !(c.Margin >= 0 && c.Margin < 1):
		return fmt.Errorf("%w: Margin must be in [0, 1)", ErrBadConfig)
	case c.Escrow && c.Margin == 0:
		return fmt.Errorf("%w: Escrow acts within the Margin: set Margin > 0", ErrBadConfig)
	case c.Owners && (c.Margin == 0 || c.Escrow):
		return fmt.Errorf("%w: Owners acts within the Margin (set Margin > 0) and Escrow has it already", ErrBadConfig)
	case !(c.GossipCap > 0 && c.GossipCap <= 1):
		return fmt.Errorf("%w: GossipCap must be in [0, 1]", ErrBadConfig)
	case !(c.CalmShare >= 0 && c.CalmShare < 1-c.Margin):
		return fmt.Errorf("%w: CalmShare must be in [0, 1 − Margin)", ErrBadConfig)
	case c.CalmShare > 0 && (c.NATS == nil || c.Escrow || c.Owners):
		return fmt.Errorf("%w: CalmShare needs gossip (NATS) and neither Escrow nor Owners (grants weigh only what Redis holds)", ErrBadConfig)
	case c.PoPs < 0:
		return fmt.Errorf("%w: PoPs must not be negative", ErrBadConfig)
	case c.ExpirySlack < 0:
		return fmt.Errorf("%w: ExpirySlack must not be negative", ErrBadConfig)
	case !(c.SyncShare > 0 && c.SyncShare <= 1):
		return fmt.Errorf("%w: SyncShare must be in [0, 1]", ErrBadConfig)
	case !(c.AuditRate >= 0 && c.AuditRate <= 1):
		return fmt.Errorf("%w: AuditRate must be in [0, 1]", ErrBadConfig)
	case len(c.Namespace) > maxNamespaceLen || strings.ContainsAny(c.Namespace, "{}*> \t\r\n"):
		return fmt.Errorf("%w: Namespace %q", ErrBadConfig, c.Namespace)
	}
	return nil
}
