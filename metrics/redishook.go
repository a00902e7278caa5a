package metrics

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// redisHook is the go-redis hook RedisHook returns.
type redisHook struct {
	cmds, pipes       prometheus.Counter
	cmdDur, pipeDur   prometheus.Observer
	pipeSize          prometheus.Observer
	replyErr, netErrs prometheus.Counter
	noScript          *lazyCounter
	canceled          *lazyCounter
}

var _ redis.Hook = (*redisHook)(nil)

// RedisHook returns a go-redis hook counting the round trips of the client
// it is added to (rdb.AddHook(c.RedisHook("main"))) under client=name:
// one per command and one per pipeline or transaction, whatever its length,
// with the round trip's duration, the pipeline's command count and, for a
// failed round trip, an error of type "reply" (Redis answered with an error)
// or "transport" (no answer: refused, reset, timed out). Answers that are
// part of normal work are not errors: redis.Nil (a missing key); NOSCRIPT,
// the first EVALSHA of a script Redis has not cached yet (after a start, a
// restart or SCRIPT FLUSH), which the caller answers by sending the script,
// is counted apart as type "noscript" (created at its first occurrence); a
// call whose context was cancelled (the caller left, matching
// context.Canceled) is counted apart as type "canceled" (created at its
// first occurrence), while a deadline that passed is "transport"; and
// a server refusing the CLIENT SETINFO and CLIENT MAINT_NOTIFICATIONS that
// go-redis sends on every new connection (and ignores the refusal of: Redis
// before 7.2 knows neither) is not counted at all. A pipeline counts one
// error at most: "reply" if any of its commands got a real error reply.
// go-redis's internal retries happen inside one counted call. The commands
// it sends to set up a new connection are counted as round trips (HELLO,
// then a pipeline with CLIENT SETINFO unless Options.DisableIdentity is set).
func (c *Collector) RedisHook(name string) redis.Hook {
	return &redisHook{
		cmds:     c.roundTrips.WithLabelValues(name, "command"),
		pipes:    c.roundTrips.WithLabelValues(name, "pipeline"),
		cmdDur:   c.roundDur.WithLabelValues(name, "command"),
		pipeDur:  c.roundDur.WithLabelValues(name, "pipeline"),
		pipeSize: c.pipeSize.WithLabelValues(name),
		replyErr: c.redisErrs.WithLabelValues(name, "reply"),
		netErrs:  c.redisErrs.WithLabelValues(name, "transport"),
		noScript: &lazyCounter{vec: c.redisErrs, labels: []string{name, "noscript"}},
		canceled: &lazyCounter{vec: c.redisErrs, labels: []string{name, "canceled"}},
	}
}

// DialHook leaves dialling as it is.
func (h *redisHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		return next(ctx, network, addr)
	}
}

// ProcessHook counts one round trip per command.
func (h *redisHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		h.cmdDur.Observe(time.Since(start).Seconds())
		h.cmds.Inc()
		h.countErr(err, cmd)
		return err
	}
}

// ProcessPipelineHook counts one round trip per pipeline.
func (h *redisHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmds)
		h.pipeDur.Observe(time.Since(start).Seconds())
		h.pipes.Inc()
		h.pipeSize.Observe(float64(len(cmds)))
		h.countErr(err, cmds...)
		return err
	}
}

// countErr counts one failed round trip of cmds that returned err, by the
// worst kind its commands met (see RedisHook).
func (h *redisHook) countErr(err error, cmds ...redis.Cmder) {
	var reply redis.Error
	switch {
	case err == nil || errors.Is(err, redis.Nil):
	case errors.Is(err, context.Canceled):
		h.canceled.get().Inc() // the caller left: no answer wanted
	case !errors.As(err, &reply):
		h.netErrs.Inc()
	default:
		switch worstReply(err, cmds) {
		case replyReal:
			h.replyErr.Inc()
		case replyNoScript:
			h.noScript.get().Inc()
		}
	}
}

// The kinds of error reply, from harmless to real.
const (
	replyNone = iota
	replyNoScript
	replyReal
)

// worstReply is the worst kind of error reply among cmds, the commands of
// a round trip that returned the error reply err. Inside a hook a lone
// command's own error is not set yet, so err stands for it; a pipeline's
// commands carry theirs.
func worstReply(err error, cmds []redis.Cmder) int {
	if len(cmds) == 1 {
		return replyKind(err, cmds[0])
	}
	worst, seen := replyNone, false
	for _, cmd := range cmds {
		if cmd.Err() != nil {
			seen = true
			worst = max(worst, replyKind(cmd.Err(), cmd))
		}
	}
	if !seen { // no command carries its error: judge by the first
		return replyKind(err, nil)
	}
	return worst
}

// replyKind classifies the error reply err that cmd (nil if unknown) got.
func replyKind(err error, cmd redis.Cmder) int {
	var reply redis.Error
	switch {
	case err == nil || errors.Is(err, redis.Nil) || !errors.As(err, &reply):
		return replyNone
	case redis.HasErrorPrefix(err, "NOSCRIPT"):
		return replyNoScript
	case cmd != nil && isConnSetup(cmd):
		return replyNone
	}
	return replyReal
}

// isConnSetup reports whether cmd is one of the commands go-redis sends to
// set up every new connection and ignores the refusal of: CLIENT SETINFO
// (unknown before Redis 7.2) and CLIENT MAINT_NOTIFICATIONS (unknown to most
// servers).
func isConnSetup(cmd redis.Cmder) bool {
	args := cmd.Args()
	if len(args) < 2 || !strings.EqualFold(cmd.Name(), "client") {
		return false
	}
	sub, ok := args[1].(string)
	return ok && (strings.EqualFold(sub, "setinfo") || strings.EqualFold(sub, "maint_notifications"))
}
