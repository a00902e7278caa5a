package peers

import (
	"context"
	"time"

	"github.com/sethvargo/go-limiter/memorystore"
)

// SethvargoMemory is github.com/sethvargo/go-limiter's memory store, a
// token bucket of max tokens per window for each key; its sweeper runs at
// its default interval. The returned close function stops the sweeper.
func SethvargoMemory(max uint64, window time.Duration) (Decider, func(), error) {
	st, err := memorystore.New(&memorystore.Config{Tokens: max, Interval: window})
	if err != nil {
		return nil, nil, err
	}
	d := func(ctx context.Context, key string) (bool, error) {
		_, _, _, ok, err := st.Take(ctx, key)
		return ok, err
	}
	return d, func() { _ = st.Close(context.Background()) }, nil
}
