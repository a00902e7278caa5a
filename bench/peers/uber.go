package peers

import (
	"context"
	"strings"
	"sync"

	"go.uber.org/ratelimit"
)

// UberPacer is go.uber.org/ratelimit, one limiter per key in a map under a
// mutex. It is a pacer, not a limiter: Take blocks until the next slot and
// never refuses, so it cannot answer "allow or deny". It is measured at a
// rate of perSecond (set it high enough that Take never waits) only to show
// the cost of its per-key bookkeeping; it always reports true.
func UberPacer(perSecond int) Decider {
	var mu sync.Mutex
	m := make(map[string]ratelimit.Limiter)
	return func(_ context.Context, key string) (bool, error) {
		mu.Lock()
		l, ok := m[key]
		if !ok {
			l = ratelimit.New(perSecond, ratelimit.WithoutSlack)
			m[strings.Clone(key)] = l
		}
		mu.Unlock()
		l.Take()
		return true, nil
	}
}
