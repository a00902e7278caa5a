package metrics

import (
	"context"
	"errors"
	"net"
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
}

var _ redis.Hook = (*redisHook)(nil)

// RedisHook returns a go-redis hook counting the round trips of the client
// it is added to (rdb.AddHook(c.RedisHook("main"))) under client=name:
// one per command and one per pipeline or transaction, whatever its length,
// with the round trip's duration, the pipeline's command count and, for a
// failed round trip, an error of type "reply" (Redis answered with an error,
// such as NOSCRIPT) or "transport" (no answer: refused, reset, timed out).
// redis.Nil (a missing key) is not an error. go-redis's internal retries
// happen inside one counted call. The commands it sends to set up a new
// connection are counted too (HELLO, then a pipeline with CLIENT SETINFO);
// Redis before 7.2 answers CLIENT SETINFO with an error, counted as a reply
// error, unless the client has Options.DisableIdentity set.
func (c *Collector) RedisHook(name string) redis.Hook {
	return &redisHook{
		cmds:     c.roundTrips.WithLabelValues(name, "command"),
		pipes:    c.roundTrips.WithLabelValues(name, "pipeline"),
		cmdDur:   c.roundDur.WithLabelValues(name, "command"),
		pipeDur:  c.roundDur.WithLabelValues(name, "pipeline"),
		pipeSize: c.pipeSize.WithLabelValues(name),
		replyErr: c.redisErrs.WithLabelValues(name, "reply"),
		netErrs:  c.redisErrs.WithLabelValues(name, "transport"),
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
		h.countErr(err)
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
		h.countErr(err)
		return err
	}
}

func (h *redisHook) countErr(err error) {
	var reply redis.Error
	switch {
	case err == nil || errors.Is(err, redis.Nil):
	case errors.As(err, &reply):
		h.replyErr.Inc()
	default:
		h.netErrs.Inc()
	}
}
