package redis

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/clientkind"
	"github.com/edgelimit/edgelimit/internal/topology"
	goredis "github.com/redis/go-redis/v9"
)

// Limiter is a core.Limiter deciding at Redis, one atomic script call per
// decision. Build it with New; the zero value is not usable. It is safe for
// concurrent use.
type Limiter struct {
	client goredis.UniversalClient
	limit  core.Limit
	cfg    config
	script *goredis.Script
	suffix string
	batch  *batcher // nil unless WithPipelining
	args   fixedArgs
	calls  atomic.Uint64
	trips  atomic.Uint64
	reload topology.Reloader // slot-map reloads after errors (cluster only)
	// bucketed: counters live in bucket hashes (WithBuckets), script is
	// the bucketed one.
	bucketed bool
}

var _ core.Limiter = (*Limiter)(nil)

// New returns a Limiter enforcing limit through client (a *goredis.Client,
// a Sentinel failover client or, for a Redis Cluster, a
// *goredis.ClusterClient or a type embedding one: any other client's calls
// that a cluster node redirects fail with a *RedirectError). An invalid limit
// returns limit.Validate's error; a nil client or a bad option returns an
// error matching core.ErrInvalid. New sends nothing to Redis.
func New(client goredis.UniversalClient, limit core.Limit, opts ...Option) (*Limiter, error) {
	if err := limit.Validate(); err != nil {
		return nil, err
	}
	if clientkind.Nil(client) {
		return nil, fmt.Errorf("%w: nil redis client", core.ErrInvalid)
	}
	cfg := defaults()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	l := &Limiter{client: client, limit: limit, cfg: cfg,
		script: Script(limit.Algorithm), suffix: Suffix(limit), args: newFixedArgs(limit, cfg)}
	if s := bucketScripts[limit.Algorithm]; s != nil && cfg.buckets > 0 {
		l.script, l.bucketed = s, true
	}
	if cfg.pipe {
		l.batch = &batcher{exec: l.runPipeline, window: cfg.pipeWindow, maxBatch: cfg.pipeMax, timeout: cfg.timeout}
		// a client whose calls end by their context's deadline
		// (ContextTimeoutEnabled, also of a client a wrapper embeds) runs a
		// lone call in its caller's goroutine, ended by the limiter's timeout
		if clientkind.ContextTimeout(client) {
			l.batch.lone = l.runLone
		}
	}
	return l, nil
}

// Limit returns the policy enforced.
func (l *Limiter) Limit() core.Limit { return l.limit }

// DeadlineBound reports whether every wait of the Limiter's AllowN, Allow,
// PeekN and Peek ends by their context's deadline (AllowEach's pipeline
// and Reset are not handed to the batch, so they are bounded only by a
// client with ContextTimeoutEnabled): true under WithPipelining (a call is handed
// to the batch's goroutine and its caller returns when its context ends)
// or when the go-redis client (a Client, ClusterClient or Ring, or a type
// embedding one) has ContextTimeoutEnabled, a ClusterClient
// DisableRoutingPolicies too; false for a plain client without it, whose
// call on a Redis that does not answer waits for the client's ReadTimeout
// (5 s by default) whatever the deadline, and for a ClusterClient with
// routing policies on (go-redis' default), which looks its command table
// up under a context of its own, 5 s long, until it has it cached. The
// middleware then calls it on the request's goroutine (see package
// middleware, DeadlineBound).
func (l *Limiter) DeadlineBound() bool {
	return l.batch != nil || clientkind.DeadlineBound(l.client)
}

// Key returns the Redis key holding id's state under this limiter's prefix
// and limit (EncodeKey with Suffix(Limit())) in the layout of one key per
// identity (see the package
// doc); a bucketed limiter (Bucketed) keeps id's counts in WindowKey's
// hashes instead.
func (l *Limiter) Key(id string) string { return EncodeKey(l.cfg.prefix, id, l.suffix) }

// AllowN decides on n units for key at now (Redis' clock instead under
// WithServerTime) and counts them when allowed. Bad key or weight, or a
// now before the Unix epoch or past core.MaxMillis (core.CheckTime; not read under
// WithServerTime): a core error matching core.ErrInvalid, nothing sent. Redis unreachable: the
// fail-mode decision and a *core.UnavailableError. A Redis Cluster node
// redirecting a client that is not a Redis Cluster client: no decision
// and a *RedirectError (matching core.ErrInvalid). ctx cancelled (the
// caller left) before Redis answered: no decision and a *CanceledError
// (matching context.Canceled, not core.ErrUnavailable); nothing is sent
// when it was cancelled before the call.
func (l *Limiter) AllowN(ctx context.Context, key string, now time.Time, n int64) (core.Decision, error) {
	if err := core.ValidateKey(key); err != nil {
		return core.Decision{}, err
	}
	if err := l.limit.CheckWeight(n); err != nil {
		return core.Decision{}, err
	}
	if err := l.checkTime(now); err != nil {
		return core.Decision{}, err
	}
	return l.decide(ctx, key, core.Millis(now), n, true)
}

// Allow is AllowN(ctx, key, clock.Now(), 1) with the limiter's clock.
func (l *Limiter) Allow(ctx context.Context, key string) (core.Decision, error) {
	return l.AllowN(ctx, key, l.cfg.clock.Now(), 1)
}

// Peek reports the decision one unit would get at now without counting or
// writing anything (not even a new key). Errors as for AllowN.
func (l *Limiter) Peek(ctx context.Context, key string, now time.Time) (core.Decision, error) {
	return l.PeekN(ctx, key, now, 1)
}

// PeekN is Peek for n units (core.PeekerN): the decision AllowN of n units
// would make at now, one script call that counts and writes nothing; its
// RetryAfter is the wait until n units fit. Errors as for AllowN.
func (l *Limiter) PeekN(ctx context.Context, key string, now time.Time, n int64) (core.Decision, error) {
	if err := core.ValidateKey(key); err != nil {
		return core.Decision{}, err
	}
	if err := l.limit.CheckWeight(n); err != nil {
		return core.Decision{}, err
	}
	if err := l.checkTime(now); err != nil {
		return core.Decision{}, err
	}
	return l.decide(ctx, key, core.Millis(now), n, false)
}

// Reset deletes key's state: its key, or under the bucketed layout its
// fields in its bucket's window hashes (one script call). Bad key: a core
// error matching core.ErrInvalid; Redis unreachable: a
// *core.UnavailableError; a cluster node redirecting a client that is not a
// cluster client: a *RedirectError; ctx cancelled: a *CanceledError (see
// AllowN).
func (l *Limiter) Reset(ctx context.Context, key string) error {
	if err := core.ValidateKey(key); err != nil {
		return err
	}
	if err := canceled(ctx, "redis reset"); err != nil {
		return err // the caller left: nothing sent
	}
	// ctx's error is context.Canceled only when the caller's was cancelled
	ctx, cancel := context.WithTimeout(ctx, l.cfg.timeout)
	defer cancel()
	if l.bucketed {
		if err := l.resetBucketed(ctx, key); err != nil {
			return l.callError(ctx, "redis reset", err)
		}
		return nil
	}
	l.trips.Add(1)
	if err := l.client.Del(ctx, l.Key(key)).Err(); err != nil {
		return l.callError(ctx, "redis del", err)
	}
	return nil
}

// callError is what a call that failed with err returns: a *CanceledError
// when the caller's context (ctx or the one it derives from) was
// cancelled, else storeError's.
func (l *Limiter) callError(ctx context.Context, op string, err error) error {
	if cerr := canceled(ctx, op); cerr != nil {
		return cerr
	}
	return l.storeError(op, err)
}

// decide runs the script for key, alone (bounded by the limiter's timeout
// through a context) or in a shared pipeline (bounded by a timer per call,
// see batcher.do).
func (l *Limiter) decide(ctx context.Context, key string, now, n int64, commit bool) (core.Decision, error) {
	if err := canceled(ctx, "redis evalsha"); err != nil {
		return core.Decision{}, err // the caller left: nothing sent
	}
	req := l.request(key, now, n, commit)
	var v any
	var err error
	if l.batch != nil {
		v, err = l.batch.do(ctx, req)
	} else {
		v, err = l.runTimed(ctx, req)
	}
	if err != nil {
		if err := canceled(ctx, "redis evalsha"); err != nil {
			return core.Decision{}, err // the caller left while Redis had the call
		}
		l.reload.AfterError(l.client) // a dead master: find its promoted replica
		return l.failure("redis evalsha", err)
	}
	d, err := l.parseReply(v)
	if err != nil {
		return l.failDecision(), &core.UnavailableError{Op: "redis evalsha", Err: err}
	}
	return d, nil
}

// failure is what a decision whose call failed with err returns: no
// decision and a *RedirectError for a redirection the client cannot
// follow, else the fail-mode decision and a *core.UnavailableError.
func (l *Limiter) failure(op string, err error) (core.Decision, error) {
	err = l.storeError(op, err)
	if _, redirected := err.(*RedirectError); redirected {
		return core.Decision{}, err
	}
	return l.failDecision(), err
}

// runTimed is run bounded by the limiter's timeout.
func (l *Limiter) runTimed(ctx context.Context, req request) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.timeout)
	defer cancel()
	return l.run(ctx, req)
}

// run sends one EVALSHA, and EVAL when Redis lost the script.
func (l *Limiter) run(ctx context.Context, req request) (any, error) {
	l.calls.Add(1)
	l.trips.Add(1)
	cmd := l.script.EvalSha(ctx, l.client, req.keys, req.args...)
	if isNoScript(cmd.Err()) {
		l.trips.Add(1)
		cmd = l.script.Eval(ctx, l.client, req.keys, req.args...)
	}
	return cmd.Result()
}

func isNoScript(err error) bool {
	return err != nil && goredis.HasErrorPrefix(err, "NOSCRIPT")
}

// checkTime refuses a request time before the Unix epoch or past core.MaxMillis (core.CheckTime)
// unless WithServerTime, under which the caller's time is not read.
func (l *Limiter) checkTime(now time.Time) error {
	if l.cfg.serverTime {
		return nil
	}
	return core.CheckTime(now)
}
