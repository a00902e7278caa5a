package redis

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/conformance"
	"github.com/edgelimit/edgelimit/internal/redistest"
)

// TestConformance runs the suite every backend passes, on one private Redis
// emptied before each limiter is built.
func TestConformance(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	conformance.Run(t, conformance.Backend{
		Name: "redis",
		New: func(t *testing.T, l core.Limit) (core.Limiter, error) {
			if err := c.FlushDB(ctx).Err(); err != nil {
				t.Fatalf("FLUSHDB: %v", err)
			}
			return New(c, l)
		},
		Stored: func(t *testing.T) int { return int(dbsize(t, c)) },
	})
}
