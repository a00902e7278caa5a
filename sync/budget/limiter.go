package budget

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/clientkind"
	"github.com/edgelimit/edgelimit/internal/topology"
	"github.com/edgelimit/edgelimit/sync/gossip"
	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
)

var _ core.Limiter = (*Limiter)(nil)

// ErrClosed is returned by a Limiter's methods after Close. It matches
// core.ErrClosed (errors.Is), as every limiter's does.
var ErrClosed = fmt.Errorf("budget: %w", core.ErrClosed)

// errDown is the cause of the core.UnavailableError AllowN returns beside
// a decision made on the view, without a call, while Redis is down.
var errDown = errors.New("the last Redis call failed: decided on the view until one succeeds")

// Limiter is the production driver of a Machine: one mutex around it, the
// Redis calls made outside the lock, and a Sync loop (Start). It is safe
// for concurrent use. Build one with New. Built without a clock (New's
// clock nil, production), every call runs at Redis on Redis' own clock
// (TIME), so the PoPs count and decide at Redis on one clock; built with
// a clock, calls carry that clock's time (tests and replays that drive
// time themselves). The waits a reply sets count from the PoP's time the
// call went out, so a skew does not move them; the PoP's window-indexed
// state (grants, leases, free credit) reads its clock against Redis'
// windows, so the PoPs' clocks must stay well within a window of Redis'
// (docs/budget.md, Clocks).
type Limiter struct {
	mu      sync.Mutex
	resetMu sync.Mutex // one Reset's Call at a time, so their sequence numbers arrive in order
	m       *Machine
	rdb     redis.UniversalClient
	clock   core.Clock
	onRedis bool // calls run on Redis' clock (New's clock was nil)
	closed  bool
	stop    chan struct{}
	done    chan struct{}
	abandon context.CancelFunc // ends the Sync loop's context (a Close whose own ended)
	tr      *gossip.Transport  // UseNATS's, or nil
	pub     *publisher         // its publisher (publisher.go), or nil
	reload  topology.Reloader  // slot-map reloads after failed calls (Redis Cluster clients only: failed)
	woken   chan struct{}      // closed when a Sync's Finish resolved parked denials (park.go; nil: nobody waits)
}

// wake tells the callers whose denials are parked (AllowN) that a Sync
// batch finished and may have resolved them. Under l.mu.
func (l *Limiter) wake() {
	if l.woken != nil {
		close(l.woken)
		l.woken = nil
	}
}

// awaitParked holds AllowN's caller, under l.mu, while its decision Call
// c's denial d is parked for a grant its group's batch in flight asked
// (Decision.Parked, park.go): until Finish of that batch resolves it, or
// ctx ends (the denial stands: Machine.Unpark; AllowN returns it with no
// error, since Redis did answer). It returns the final Decision, l.mu
// held.
func (l *Limiter) awaitParked(ctx context.Context, c *Call, d Decision) Decision {
	for d.Parked {
		if l.woken == nil {
			l.woken = make(chan struct{})
		}
		woken := l.woken
		l.mu.Unlock()
		select {
		case <-woken:
			l.mu.Lock()
			d = l.m.complete(0, c, nil, nil, false) // completed: its Decision, parked or resolved
		case <-ctx.Done():
			l.mu.Lock()
			d = l.m.Unpark(c)
		}
	}
	return d
}

// failed requests a reload of a Redis Cluster client's slot map after a
// call failed with err (topology.Reloader, at most one per
// topology.MinInterval): go-redis reloads it by itself only on a MOVED or
// ASK reply or every ClusterStateReloadInterval (60 s by default), and a
// dead master sends neither, so without it, once a replica took over, the
// dead master's groups kept failing for up to that interval. A
// redirection (a client that is no cluster client) and a caller that left
// say nothing of the topology.
func (l *Limiter) failed(err error) {
	if err != nil && !misrouted(err) && !errors.Is(err, context.Canceled) {
		l.reload.AfterError(l.rdb)
	}
}

// New returns a Limiter for cfg on rdb, with a random incarnation when
// cfg.Incarnation is 0, 16 groups (or cfg.Buckets when fewer) when
// cfg.Groups is 0 and rdb is a Redis Cluster client, a *redis.ClusterClient or a type embedding one (any
// client with its ForEachMaster and ReloadState methods), so the groups'
// keys spread over the masters (one Sync call per group and round trip; on
// one Redis a single group costs the fewest calls), reading time from clock:
// nil, for production, is the system clock here and Redis' own clock
// (TIME) for every call at Redis; a clock given is also the time the calls
// carry (a test's core.ManualClock, a replay's; a core.CoarseClock too,
// so in production leave it nil). Errors wrap ErrConfig. The Sync loop
// runs once Start is called.
func New(cfg Config, rdb redis.UniversalClient, clock core.Clock) (*Limiter, error) {
	if clientkind.Nil(rdb) {
		// nil, or a *redis.Client variable left unset: the first call would panic
		return nil, fmt.Errorf("%w: no Redis client", ErrConfig)
	}
	cfg, err := ForClient(cfg, rdb)
	if err != nil {
		return nil, err
	}
	m, err := NewMachine(cfg)
	if err != nil {
		return nil, err
	}
	onRedis := clock == nil
	if clock == nil {
		clock = core.SystemClock{}
	}
	return &Limiter{m: m, rdb: rdb, clock: clock, onRedis: onRedis}, nil
}

// ForClient returns cfg as New completes it for rdb: a random Incarnation
// when cfg.Incarnation is 0, and 16 Groups (or cfg.Buckets when fewer)
// when cfg.Groups is 0 and rdb is a Redis Cluster client or a type
// embedding one (a group is one hash tag:
// they spread over the masters). A driver of its own (the simulator)
// builds its Machines from it, so they are configured as a Limiter on the
// same client. The error is crypto/rand's, when drawing fails.
func ForClient(cfg Config, rdb redis.UniversalClient) (Config, error) {
	if cfg.Incarnation == 0 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return cfg, fmt.Errorf("budget: drawing an incarnation: %w", err)
		}
		cfg.Incarnation = binary.LittleEndian.Uint64(b[:]) | 1
	}
	if _, cluster := clientkind.AsCluster(rdb); cluster && cfg.Groups == 0 {
		cfg.Groups = 16
		if cfg.Buckets > 0 {
			cfg.Groups = min(16, cfg.Buckets) // no group without a bucket
		}
	}
	return cfg, nil
}

// at is the time (ms) a call planned at now runs at at Redis: Redis' own
// clock (−1, read by the script) or now.
func (l *Limiter) at(now int64) int64 {
	if l.onRedis {
		return -1
	}
	return now
}

// Allow decides one unit of key now (the Limiter's clock): AllowN(ctx,
// key, now, 1).
func (l *Limiter) Allow(ctx context.Context, key string) (core.Decision, error) {
	return l.AllowN(ctx, key, l.clock.Now(), 1)
}

// AllowN decides n units of key at now. A request the budget covers
// returns at once; one it does not is decided at Redis (one round trip,
// without the lock held). At a lone PoP (Config.PoPs 1), a denial Redis
// made for the grant this PoP's Sync batch in flight asked waits for that
// batch's reply and is paid from the grant (park.go), or, when ctx ends
// first, returns the denial with no error. A failed call is decided on the view (see
// Machine.decide) and its error, wrapping core.ErrUnavailable, returned
// beside the Decision; so is a decision made on the view without a call
// while Redis is down (Machine.Down). Machine.Describe says what the Decision's
// Remaining, RetryAfter, ResetAfter and Staleness hold. A call a Redis
// Cluster node redirected (the client is not a Redis Cluster client)
// returns the zero Decision, denied, and a *RedirectError matching
// core.ErrInvalid, whatever FailClosed says, and leaves Redis up for every
// other identity. ctx bounds the call only: a request the budget covers
// is decided whatever ctx says. A request whose caller's ctx was
// cancelled (it left) before Redis answered gets the zero Decision and a
// *CanceledError (matching context.Canceled, not core.ErrUnavailable),
// and the Limiter is not put down: what this PoP took for the request is
// handed back and its report sent again (Machine.Complete); cancelled
// before the call, nothing is sent and nothing of the request stays
// counted; cancelled while Redis ran it, what Redis may have counted
// stays counted. A ctx whose deadline passed before the call is decided
// on the view, with a *core.UnavailableError wrapping the deadline, and
// does not put the Limiter down; one that passes while Redis does not
// answer is an outage. A panic in the Redis call (a client's hook) goes
// on to the caller once the Call is completed as a caller's that left
// (execDecision). A call not sent is not counted in Stats. After
// Close it returns ErrClosed. A bad key (core.ValidateKey), a weight
// outside 1..Limit.Max or a now before the Unix epoch or past core.MaxMillis (core.CheckTime)
// returns an error matching core.ErrInvalid, and nothing is counted,
// planned or sent.
func (l *Limiter) AllowN(ctx context.Context, key string, now time.Time, n int64) (core.Decision, error) {
	if err := core.ValidateKey(key); err != nil {
		return core.Decision{}, err
	}
	if err := l.m.Config().Limit.CheckWeight(n); err != nil {
		return core.Decision{}, err
	}
	if err := core.CheckTime(now); err != nil {
		return core.Decision{}, err
	}
	t := core.Millis(now)
	pop := core.Millis(l.clock.Now()) // the PoP's clock, which now may run ahead of (Machine.Clock)
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return core.Decision{}, ErrClosed
	}
	l.m.Clock(pop)
	d, c := l.m.request(t, key, n) // n checked above
	if c != nil && !l.onRedis {
		// the script runs at t, the request's own time (at): a decision
		// there is already at the request's instant, so nothing to age
		c.age = 0
	}
	if c == nil {
		defer l.mu.Unlock()
		var err error
		if d.Source == SrcFallback && l.m.Down() {
			// Redis is down: the caller (a middleware's fail mode) must
			// know, as for a decision whose own call failed
			err = &core.UnavailableError{Op: "budget decide", Err: errDown}
		}
		return l.m.Describe(t, key, n, d), err
	}
	// A Call for a caller whose context has ended is not sent: it is
	// taken out of Stats before the lock goes, so no reader sees it.
	err := ctx.Err()
	if err != nil {
		l.m.Unsent(c)
	}
	l.mu.Unlock()
	// A caller that left (its context cancelled after the Call was planned,
	// or while it ran) says nothing of Redis' health: a *CanceledError,
	// which Machine.Complete takes as no outage and no decision (its
	// report is sent again, what this PoP took for it handed back). A
	// deadline that passed before the call went out fails the Call
	// without putting the Limiter down for every other caller (decided on
	// the view); one that passes while Redis does not answer is an outage.
	var r *Result
	sent := core.Millis(l.clock.Now())
	failed := true // a failure is Redis'
	switch {
	case errors.Is(err, context.Canceled):
		err = &CanceledError{Op: "budget script", Err: err} // nothing sent
	case err != nil:
		err, failed = &core.UnavailableError{Op: "budget script", Err: err}, false
	default:
		r, err = l.execDecision(ctx, c, t, sent)
	}
	// a failed call is decided on the view as it is at the reply's arrival
	// (Machine.Complete)
	arrived := l.arrival(t, sent)
	l.mu.Lock()
	defer l.mu.Unlock()
	d = l.m.complete(arrived, c, r, err, failed)
	d = l.awaitParked(ctx, c, d)
	if misrouted(err) || left(err) {
		return core.Decision{}, err // no decision (Machine.Complete)
	}
	return l.m.Describe(arrived, key, n, d), err
}

// arrival is when the reply of a call sent at sent (the PoP's clock) for
// a request stamped t came, on the request's timeline: t plus the time
// the call took.
func (l *Limiter) arrival(t, sent int64) int64 {
	return t + max(0, core.Millis(l.clock.Now())-sent)
}

// callError is what a call on ctx that failed with err returns: a
// *CanceledError when ctx was cancelled (its caller left while Redis had
// the call), else err, after which a Redis Cluster client's slot map is
// reloaded (failed); nil for nil.
func (l *Limiter) callError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ce := canceled(ctx, "budget script"); ce != nil {
		return ce
	}
	l.failed(err)
	return err
}

// Peek reports the decision one unit of key would get at now, counting
// nothing: one round trip to Redis (a script call that counts nothing)
// unless the deny cache already denies key, or Redis is down (a call of
// this Limiter failed, and no Sync has found Redis back since): then the
// view's answer and an error wrapping core.ErrUnavailable, no call, as
// AllowN decides on the view then. Remaining is Redis' headroom plus
// what this PoP holds (Machine.PeekDone). A failed call returns the
// view's answer and an error wrapping core.ErrUnavailable, and puts the
// Limiter down as a failed AllowN does, a redirected
// one the zero Decision and a *RedirectError (see AllowN); a caller whose
// ctx was cancelled before Redis answered the zero Decision and a
// *CanceledError, with nothing sent when it was cancelled first (a deny
// cache's answer needs no call and comes whatever ctx says). A ctx whose
// deadline had passed before the call sends nothing and asks a Redis
// Cluster client for no slot-map reload: it returns the view's answer,
// as a failed call does, with a *core.UnavailableError wrapping the
// deadline (Reset's error in that case), and does not put the Limiter
// down. The view's answer rather than the zero Decision, as AllowN
// decides on the view past its deadline: core.Limiter pairs
// core.ErrUnavailable with the fail mode's decision, and a caller that
// peeks first (package middleware) takes that decision as Peek's, so a
// zero Decision, denied, would deny a request in fail-open mode. A bad
// key or a now before the Unix epoch or past core.MaxMillis returns an error matching
// core.ErrInvalid, with nothing sent;
// after Close, ErrClosed. Peek is PeekN of one unit.
func (l *Limiter) Peek(ctx context.Context, key string, now time.Time) (core.Decision, error) {
	return l.PeekN(ctx, key, now, 1)
}

// PeekN reports the decision n units of key would get at now, counting
// nothing (core.PeekerN): allowed when what this PoP holds of key and
// Redis' headroom cover them, or Redis would decide the part this PoP
// would ask it for (AllowN pays the rest from what it holds); denied with
// RetryAfter the wait until that part fits. Errors, round trips and the
// deny cache as Peek's; a weight outside 1..Limit.Max returns an error
// matching core.ErrBadWeight, with nothing sent.
func (l *Limiter) PeekN(ctx context.Context, key string, now time.Time, n int64) (core.Decision, error) {
	if err := core.ValidateKey(key); err != nil {
		return core.Decision{}, err
	}
	if err := l.m.Config().Limit.CheckWeight(n); err != nil {
		return core.Decision{}, err
	}
	if err := core.CheckTime(now); err != nil {
		return core.Decision{}, err
	}
	t := core.Millis(now)
	pop := core.Millis(l.clock.Now())
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return core.Decision{}, ErrClosed
	}
	l.m.Clock(pop)
	d, c := l.m.PeekN(t, key, n)
	down := l.m.Down() // read under the lock: a Sync writes it
	l.mu.Unlock()
	if c == nil {
		if d.Source != core.SourceCachedDeny && down {
			// Redis is down: the view's answer, no call (the caller's
			// fail mode must know, as for a peek whose own call failed)
			return d, &core.UnavailableError{Op: "budget peek", Err: errDown}
		}
		return d, nil
	}
	if err := ended(ctx, "budget peek"); err != nil {
		// the caller left, or the deadline passed: nothing sent, no reload
		// asked (Redis said nothing of the topology); the report the Call
		// carried goes again with the next Sync (PeekDone)
		l.mu.Lock()
		defer l.mu.Unlock()
		d := l.m.peekDone(t, c, nil, err, false) // not Redis' failure: not down
		if left(err) {
			return core.Decision{}, err
		}
		return d, err // answered from the view as a failed call
	}
	r, err := l.execPeek(ctx, c, t)
	l.mu.Lock()
	defer l.mu.Unlock()
	d = l.m.PeekDone(t, c, r, err) // its report done with, whatever err says
	if misrouted(err) || left(err) {
		return core.Decision{}, err // a configuration error, or the caller left: no decision
	}
	return d, err
}

// Reset forgets what was counted of key at Redis and in this PoP's view
// (Machine.Reset has what stays accounted), one round trip. Resets run
// one at a time. The view is forgotten once Redis applied the call
// (Machine.ResetDone); decisions made meanwhile are made on the view as
// before. A failed call returns an error wrapping core.ErrUnavailable
// (Redis may or may not have applied it: Reset again), a redirected one a
// *RedirectError (nothing applied); a caller whose ctx was cancelled a
// *CanceledError: before the call, with nothing forgotten or sent, while
// Redis had it, applied or not (Reset again); one whose ctx's deadline had
// passed a *core.UnavailableError wrapping it, with nothing forgotten or
// sent; a bad key an error matching core.ErrInvalid, with nothing sent;
// after Close, ErrClosed. After a failed Reset that carried unreported
// spends, up to 31 more may run before the next Sync sends them again;
// the next returns a *core.UnavailableError with nothing forgotten or sent
// (Reset again after that Sync), since Redis keeps a window of 32 of the
// Resets' numbers and would refuse the failed one's. Whatever the error,
// this PoP's view is left as it was: it decides the identity as before
// the Reset (its deny cache, its own counts, Redis' last word), in an
// outage too, and the unreported
// spends the call carried are not lost: a redirected call's wait for the
// next Sync, a failed one's go again with it under the Reset's number,
// applied once (with the Reset, when Redis had applied it, else without).
func (l *Limiter) Reset(ctx context.Context, key string) error {
	if err := core.ValidateKey(key); err != nil {
		return err
	}
	l.resetMu.Lock()
	defer l.resetMu.Unlock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	if err := ended(ctx, "budget reset"); err != nil {
		l.mu.Unlock()
		return err // the caller left or its deadline passed (perhaps while an earlier Reset ran): nothing forgotten or sent
	}
	c := l.m.Reset(core.Millis(l.clock.Now()), key)
	l.mu.Unlock()
	if c == nil {
		return &core.UnavailableError{Op: "budget reset", Err: errResetBacklog} // nothing forgotten or sent
	}
	err := l.execReset(ctx, c)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m.ResetDone(c, err) // the view is forgotten only when Redis applied it
	return err
}

// errResetBacklog is why a Reset planned nothing: the failed Resets' ops
// still to be sent again are as far behind as Redis' window of the
// Resets' numbers reaches (Machine.Reset).
var errResetBacklog = errors.New("failed Resets' reports still to be sent by the next Sync: Reset again after it")

// Limit returns the limit enforced.
func (l *Limiter) Limit() core.Limit { return l.m.Config().Limit }

// UseNATS has the Limiter gossip over nc (see Machine.Gossip): every Sync
// publishes what Redis said of identities over their limit on its limit's
// subject (Subject of Keyspace(Config.Namespace, Config.Limit)), and what
// the other PoPs of that limit publish there denies those identities here
// without a round trip; a limit sharing the Namespace gossips apart. Call it once, before
// Start; a PoP that does not decides as before. A malformed message is
// dropped and counted (Stats.GossipMalformed), as is, unread, one longer
// than the 64 KiB a Limiter publishes at most; a failed publish counted
// (Stats.GossipLost); neither stops the Limiter. Publishing runs on a
// goroutine of its own, so a NATS write that blocks holds up no Sync:
// at most 64 payloads wait for it, and when a Sync finds no room the
// oldest is dropped and counted lost too. Errors: ErrClosed after
// Close; ErrConfig when called twice; a Namespace whose subject is no
// literal NATS subject (a token "*" or ">", an empty token, whitespace:
// gossip.Subject) an error matching gossip.ErrSubject and core.ErrInvalid,
// nothing subscribed; a failed subscription wraps core.ErrUnavailable.
func (l *Limiter) UseNATS(nc *nats.Conn) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return ErrClosed
	case l.tr != nil:
		return fmt.Errorf("%w: UseNATS called twice", ErrConfig)
	}
	tr := Transport(nc, l.m.Keyspace())
	sub, err := tr.Subscribe(l.hear)
	if err != nil {
		return err
	}
	l.tr, l.pub = tr, startPublisher(tr, sub, l.lostGossip)
	return nil
}

// Subject is the NATS subject the budget gossip of space travels on
// (gossip.Subject of space and ".budget"); identities never appear in it.
// A Limiter's space is its limit's Keyspace (UseNATS): Subject(Keyspace(
// "el", core.PerWindow(10, time.Second))) is "el:10/1s.budget" and
// gossip.SubjectSuffix, so limits sharing a Namespace gossip apart.
// (Versions before took the Namespace alone: their PoPs and these do not
// hear each other.)
func Subject(space string) string { return gossip.Subject(gossipNamespace(space)) }

// Transport is a gossip.Transport on nc for space's budget gossip
// (Subject): what UseNATS publishes and subscribes through, with space
// its limit's Keyspace.
func Transport(nc *nats.Conn, space string) *gossip.Transport {
	return gossip.NewTransport(nc, gossipNamespace(space))
}

// gossipNamespace keeps budget gossip on a subject of its own within the
// space.
func gossipNamespace(space string) string { return space + ".budget" }

// hear applies one received gossip payload (nats.go's delivery goroutine),
// decoded before the lock is taken. A payload longer than any a Limiter
// publishes (gossipPayloadBytes) is refused unread and counted malformed:
// applied, one of gossip's 1 MiB (130,000 entries) held the lock, and
// every decision with it, about 4 ms (40 ms under the race detector); one
// of 64 KiB holds it a sixteenth of that.
func (l *Limiter) hear(payload []byte) {
	var msg gossip.Message
	err := gossip.ErrTooLarge // refused unread
	if len(payload) <= gossipPayloadBytes {
		msg, err = gossip.Decode(payload)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
	case err != nil:
		l.m.stats.GossipMalformed++
	default:
		l.m.Hear(core.Millis(l.clock.Now()), msg)
	}
}

// Sync runs one Sync now: the Machine's batches (Tick) are sent in one
// pipeline (ExecAll) without the lock held, and their outcomes applied
// (Finish); then its gossip (Machine.Gossip) is published, with UseNATS.
// It returns the first call's error, wrapping core.ErrUnavailable, or a
// *RedirectError for a batch a Redis Cluster node redirected (which does
// not count Redis down); failed batches are sent again by the next Sync.
// When ctx was cancelled before, it returns a *CanceledError and plans,
// sends and publishes nothing; when its deadline had passed, a
// *core.UnavailableError wrapping it, and plans, sends and publishes
// nothing, without putting the Limiter down; cancelled while Redis had
// the batches, a *CanceledError, the Limiter not put down and the
// batches sent again by the next Sync. After Close it returns ErrClosed
// and sends nothing (Close runs the last Sync itself).
func (l *Limiter) Sync(ctx context.Context) error { return l.syncing(ctx, true) }

// sync is Sync without the Close check: the loop's and Close's last.
func (l *Limiter) sync(ctx context.Context) error { return l.syncing(ctx, false) }

// syncing runs a Sync, refusing it after Close when open says so.
func (l *Limiter) syncing(ctx context.Context, open bool) error {
	if err := ended(ctx, "budget sync"); err != nil {
		return err // the caller left or its deadline passed: nothing planned or sent
	}
	calls, ok := l.tick(open)
	if !ok {
		return ErrClosed
	}
	var first error
	if len(calls) > 0 {
		res, errs := l.execSync(ctx, calls)
		landed := core.Millis(l.clock.Now())
		gone := canceled(ctx, "budget sync")
		for i, err := range errs {
			if err != nil && gone != nil {
				errs[i] = gone // the caller left while Redis had the batch: no outage (Finish)
			}
		}
		first = l.finish(calls, res, errs, landed)
		for _, err := range errs {
			l.failed(err) // outside the lock: a wrapper's ReloadState is the user's code
		}
	}
	l.publish()
	return first
}

// tick plans a Sync's batches (Machine.Tick) under the lock; ok is false,
// with nothing planned, when open is set and the Limiter is closed (the
// check and the plan under one lock, so no Sync plans after Close).
func (l *Limiter) tick(open bool) (calls []*Call, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if open && l.closed {
		return nil, false
	}
	return l.m.Tick(core.Millis(l.clock.Now())), true
}

// finish applies a Sync's outcomes (Machine.Finish), the replies landed at
// landed, under the lock, and returns the first error.
func (l *Limiter) finish(calls []*Call, res []*Result, errs []error, landed int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m.Clock(landed) // the replies' arrival: a batch that waited through an outage starts the grace then
	var first error
	for i, c := range calls {
		if len(l.m.Finish(c, res[i], errs[i])) > 0 { // a failed batch is kept for the next Sync
			l.wake() // parked denials resolved
		}
		if errs[i] != nil && first == nil {
			first = errs[i]
		}
	}
	return first
}

// misrouted reports whether err is a *RedirectError: the client cannot
// reach every node of a Redis Cluster, a configuration error.
func misrouted(err error) bool {
	var re *RedirectError
	return errors.As(err, &re)
}

// gossipPayloadBytes bounds one published gossip payload, and one heard
// (hear).
const gossipPayloadBytes = 64 << 10

// publish hands the Machine's gossip (always taken, so its queue stays
// bounded without NATS) to the publisher, which writes it to NATS on its
// own goroutine: a Sync never waits on NATS. When the publisher's queue
// is full its oldest payloads are dropped and counted in GossipLost.
func (l *Limiter) publish() {
	l.mu.Lock()
	msg, ok := l.m.Gossip(core.Millis(l.clock.Now()))
	tr := l.tr
	l.mu.Unlock()
	if !ok || tr == nil {
		return
	}
	payloads, err := gossip.Encode(msg, gossipPayloadBytes)
	lost := uint64(0)
	if err != nil {
		lost = 1 // cannot happen: the Machine's keys and counts are valid, and Encode splits windows far apart
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m.stats.GossipLost += lost + l.pub.offer(payloads)
}

// Start runs Sync at once and then every Config.SyncInterval until Close.
// Calling it twice is a no-op. Until its first Sync's reply (or a
// decision's) lands, this PoP holds no free-credit lease and asks Redis
// for what free credit would have covered (lease.go).
func (l *Limiter) Start() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop != nil || l.closed {
		return
	}
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	l.abandon = cancel
	go l.loop(ctx, l.m.cfg.SyncInterval)
}

func (l *Limiter) loop(ctx context.Context, every time.Duration) {
	defer close(l.done)
	t := time.NewTicker(every)
	defer t.Stop()
	_ = l.sync(ctx) // at once: it takes the free-credit lease (lease.go)
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			_ = l.sync(ctx) // a failure is retried by the next Sync
		}
	}
}

// Close stops the Sync loop, runs a last Sync (what that Sync plans: a
// grant stays with an identity that still had demand and expires with its
// window) and refuses further requests. It returns
// that Sync's error; a second Close returns ErrClosed. When ctx has ended
// (before Close, or while the loop's Sync is still at Redis), Close runs
// no last Sync, gives the loop's Sync up (its context cancelled), and
// returns what Sync returns for such a ctx: a *CanceledError when it was
// cancelled, a *core.UnavailableError wrapping the deadline when that
// passed. With UseNATS, Close does not wait on NATS: the gossip still
// queued (the last Sync's included) is published on the publisher's
// goroutine, which then unsubscribes and ends; on a connection whose
// writes block, once they return (the connection's write timeout: 5 s
// with gossip.ConnectOptions) or fail. A connection closed meanwhile
// fails what is left (counted in GossipLost).
func (l *Limiter) Close(ctx context.Context) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.closed = true
	stop, done, abandon := l.stop, l.done, l.abandon
	l.mu.Unlock()
	defer l.endGossip() // after the last Sync queued its gossip
	if err := ended(ctx, "budget close"); err != nil {
		// checked first: with the loop done too, a select would pick
		// either case at random, and so either error
		if stop != nil {
			close(stop)
			abandon()
		}
		return err
	}
	if stop != nil {
		close(stop)
		select {
		case <-done:
		case <-ctx.Done():
			abandon()
			return ended(ctx, "budget close")
		}
		abandon()
	}
	return l.sync(ctx)
}

// Stats returns the Machine's counters (Stats). Calls, Items and
// RoundTrips count what the Limiter sent to Redis: a Call planned for a
// caller whose context had ended is not sent, and not counted (a context
// that ends as the call goes out may see the Redis client drop a call
// counted as sent). GossipSent counts the messages the Machine made,
// published or not: without UseNATS none is published (the Limiter takes
// them all the same, so the queue stays bounded).
func (l *Limiter) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m.Stats()
}

// DeadlineBound reports whether every wait of the Limiter's decisions
// ends by their context's deadline: true when its go-redis client (a
// Client, ClusterClient or Ring, or a type embedding one) has
// ContextTimeoutEnabled, a ClusterClient DisableRoutingPolicies too, since
// a decision waits only on its one script call; a decision from the view
// waits for nothing. A ClusterClient with routing policies on (go-redis'
// default) looks its command table up before a call, until it has it
// cached, under a context of its own, 5 s long: not DeadlineBound. The
// middleware then calls it on the request's goroutine (see package
// middleware, DeadlineBound).
func (l *Limiter) DeadlineBound() bool {
	return clientkind.DeadlineBound(l.rdb)
}
