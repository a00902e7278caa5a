package redis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// TestCheckClientCallerGone: CheckClient, the package's and a Limiter's,
// on a healthy Redis, called with a context already cancelled or
// cancelled while Redis answers it, returns a *CanceledError matching
// context.Canceled and not core.ErrUnavailable (the caller left: Redis is
// not down), as a decision does; cancelled first, Redis is sent nothing. A
// deadline that passed is still a *core.UnavailableError wrapping
// context.DeadlineExceeded (Redis did not answer within the caller's
// bound). Caught mutations: a cancellation reported as Redis unavailable
// (a health probe or a startup check whose caller left would say Redis is
// down), a deadline reported as a caller gone, a call sent for a caller
// already gone.
func TestCheckClientCallerGone(t *testing.T) {
	admin, p := redistest.Client(t)
	hook := &redistest.LeaveDuring{}
	rdb := goredis.NewClient(&goredis.Options{Addr: p.Addr})
	rdb.AddHook(hook)
	t.Cleanup(func() { rdb.Close() })
	l := newLimiter(t, rdb, core.PerWindow(5, time.Minute), WithPrefix("myapp"))
	checks := map[string]func(context.Context) error{
		"CheckClient":         func(ctx context.Context) error { return CheckClient(ctx, rdb) },
		"Limiter.CheckClient": l.CheckClient,
	}
	redistest.CheckCallerGone(t, admin, hook, checks, func(err error) bool {
		var ce *CanceledError
		return errors.As(err, &ce)
	})
}
