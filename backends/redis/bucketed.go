package redis

import (
	"context"
	"fmt"
	"strconv"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/lua"
	goredis "github.com/redis/go-redis/v9"
)

// MaxBuckets is the largest bucket count WithBuckets accepts.
const MaxBuckets = 1 << 24

// BucketHorizon is how many windows after a request's own the bucketed
// scripts search for a newer count of its identity (a clock that went
// back), and how many windows before the bucket's newest, and before and
// after the window of the limiter's clock, Reset clears.
// A request stamped more than BucketHorizon windows before its bucket's
// newest window is decided in its own window, not in the identity's
// newest as core would (see the package doc).
const BucketHorizon = 64

// WithBuckets sets the key layout of the sliding window counter and the
// fixed window: n > 0 spreads identities over n buckets, each keeping one
// Redis hash per window (field: the identity, value: its count) that
// expires as a whole; n = 0, the default (DefaultBuckets), keeps one
// string key per identity. It has no
// effect on the sliding log (a sorted set per identity) or the token
// bucket (a TAT per identity), which keep their own keys. Every process
// sharing a prefix must use the same n: identities are placed by a hash
// of their key modulo n. Size n as the identities active in one window
// divided by 80 (see the package doc, "Bucketed layout"). n outside
// [0, MaxBuckets] makes New fail with an error matching core.ErrInvalid.
func WithBuckets(n int) Option { return func(c *config) { c.buckets, c.bucketsSet = n, true } }

// bucketScripts are the bucketed layout's scripts, by core.Algorithm
// (nil for algorithms that keep their own keys).
var bucketScripts = map[core.Algorithm]*goredis.Script{
	core.SlidingWindow: mustScript("sliding_bucket"),
	core.FixedWindow:   mustScript("fixed_bucket"),
}

// resetBucketScript deletes one identity's fields from its bucket.
var resetBucketScript = mustScript("reset_bucket")

func mustScript(name string) *goredis.Script {
	src, err := lua.Source(name)
	if err != nil {
		panic("backends/redis: " + err.Error())
	}
	return goredis.NewScript(src)
}

// BucketOf returns the bucket, in [0, n), of identity id among n > 0
// buckets: FNV-1a (64 bits) of id's bytes modulo n, the same in every
// process.
func BucketOf(id string, n int) int {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	return int(h % uint64(n))
}

// BucketMarkerKey returns the key of bucket b's marker for the limit of
// suffix (see Suffix): "{" + prefix + ":" + b + "}:" + suffix + ":m". It
// holds the newest window number written in the bucket; window j's hash
// is the same key with j in place of the final "m". The braces make the
// bucket's keys one Redis Cluster slot, and distinct buckets spread over
// the slots.
func BucketMarkerKey(prefix string, b int, suffix string) string {
	return bucketBase(prefix, b, suffix) + "m"
}

// BucketWindowKey returns the key of bucket b's hash for window number j.
func BucketWindowKey(prefix string, b int, suffix string, j int64) string {
	return bucketBase(prefix, b, suffix) + strconv.FormatInt(j, 10)
}

func bucketBase(prefix string, b int, suffix string) string {
	return "{" + prefix + ":" + strconv.Itoa(b) + "}:" + suffix + ":"
}

// Bucketed reports whether this limiter keeps its counters in buckets
// (WithBuckets with n > 0, for the sliding window counter or the fixed
// window).
func (l *Limiter) Bucketed() bool { return l.bucketed }

// WindowKey returns the Redis hash holding id's count for the window of
// now under the bucketed layout, or "" when the limiter keeps one key per
// identity (then Key names it).
func (l *Limiter) WindowKey(id string, now int64) string {
	if !l.Bucketed() {
		return ""
	}
	w := l.limit.WindowMillis()
	return BucketWindowKey(l.cfg.prefix, BucketOf(id, l.cfg.buckets), l.suffix, floorDiv(now, w))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// markerKey is the marker of id's bucket.
func (l *Limiter) markerKey(id string) string {
	return BucketMarkerKey(l.cfg.prefix, BucketOf(id, l.cfg.buckets), l.suffix)
}

// request builds the script call deciding n units for identity id at now
// (ms), on whichever layout the limiter uses.
func (l *Limiter) request(id string, now, n int64, commit bool) request {
	if !l.Bucketed() {
		return l.newRequest(l.Key(id), now, n, commit)
	}
	a := l.args
	return request{
		keys: []string{l.markerKey(id)},
		args: []any{now, a.window, a.max, n, a.commit[boolArg(commit)], a.serverTime, a.slack, id, BucketHorizon},
	}
}

// resetBucketed deletes id's fields from its bucket in one script call:
// around the bucket's newest window and around the window of now (the
// limiter's clock, or Redis' under WithServerTime).
func (l *Limiter) resetBucketed(ctx context.Context, id string) error {
	keys := []string{l.markerKey(id)}
	args := []any{id, BucketHorizon, core.Millis(l.cfg.clock.Now()), l.args.window, l.args.serverTime}
	l.trips.Add(1)
	cmd := resetBucketScript.EvalSha(ctx, l.client, keys, args...)
	if isNoScript(cmd.Err()) {
		l.trips.Add(1)
		cmd = resetBucketScript.Eval(ctx, l.client, keys, args...)
	}
	return cmd.Err()
}

// validBuckets checks WithBuckets' n.
func validBuckets(n int) error {
	if n < 0 || n > MaxBuckets {
		return fmt.Errorf("%w: bucket count %d outside [0, %d]", core.ErrInvalid, n, MaxBuckets)
	}
	return nil
}

// DefaultBuckets is the bucket count used unless WithBuckets says
// otherwise: 0, one key per identity.
const DefaultBuckets = 0
