package peers

import (
	"context"

	"github.com/edgelimit/edgelimit/core"
)

// Ours wraps any of edgelimit's own limiters (local, Redis, budget).
func Ours(l core.Limiter) Decider {
	return func(ctx context.Context, key string) (bool, error) {
		d, err := l.Allow(ctx, key)
		return d.Allowed, err
	}
}
