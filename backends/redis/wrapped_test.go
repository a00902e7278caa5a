package redis

import (
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
)

// TestWrappedClientLoneCall: a pipelined limiter runs a lone call in its
// caller's goroutine (its batcher has lone) exactly when its client ends
// calls by their context's deadline: ContextTimeoutEnabled on a client or
// a cluster client, or on the one a type of the user's embeds. No call is
// made. Caught mutation: telling the client by its concrete type (a
// wrapper's lone calls handed to another goroutine).
func TestWrappedClientLoneCall(t *testing.T) {
	for _, bound := range []bool{false, true} {
		c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: bound})
		cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, ContextTimeoutEnabled: bound})
		t.Cleanup(func() { c.Close(); cc.Close() })
		for name, client := range map[string]goredis.UniversalClient{
			"client": c, "wrapped client": struct{ *goredis.Client }{c},
			"cluster client": cc, "wrapped cluster client": struct{ *goredis.ClusterClient }{cc},
		} {
			l := newLimiter(t, client, core.PerWindow(10, time.Minute), WithPipelining(time.Millisecond, 16))
			assert.Equal(t, bound, l.batch.lone != nil, "%s, ContextTimeoutEnabled %v", name, bound)
		}
	}
}
