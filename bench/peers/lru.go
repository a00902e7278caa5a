package peers

import (
	"context"
	"strings"

	"github.com/edgelimit/edgelimit/core"
	lru "github.com/hashicorp/golang-lru/v2"
)

// BareLRU is the floor of the in-process table, not a limiter: a bare
// github.com/hashicorp/golang-lru/v2 Cache.Get (one lock for the whole
// cache) on the given keys, which it holds (as copies). It reports whether
// the key was found.
func BareLRU(keys []string) (Decider, error) {
	c, err := lru.New[string, *core.WindowState](2 * len(keys))
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		c.Add(strings.Clone(k), &core.WindowState{})
	}
	return func(_ context.Context, key string) (bool, error) {
		_, ok := c.Get(key)
		return ok, nil
	}, nil
}
