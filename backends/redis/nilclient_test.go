package redis

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
)

// TestTypedNilClientRefused: New refuses a nil client with an error
// matching core.ErrInvalid, but a nil *goredis.Client (or
// *goredis.ClusterClient) held in the UniversalClient interface — a
// variable left unset when Redis is not configured — passes the check:
// New panics under WithPipelining (it reads the client's options), and
// otherwise returns a limiter whose first decision panics.
func TestTypedNilClientRefused(t *testing.T) {
	var c *goredis.Client
	for _, opts := range [][]Option{nil, {WithPipelining(time.Millisecond, 8)}} {
		var l *Limiter
		var err error
		if !assert.NotPanics(t, func() { l, err = New(c, core.PerWindow(10, time.Minute), opts...) }, "New(nil *Client, %d options)", len(opts)) {
			continue
		}
		if err != nil {
			assert.ErrorIs(t, err, core.ErrInvalid)
			continue
		}
		assert.NotPanics(t, func() { _, err = l.AllowN(context.Background(), "k", time.Now(), 1) }, "AllowN on a limiter built on a nil *Client")
		assert.Fail(t, "New accepted a nil *goredis.Client", "options %d, AllowN err %v", len(opts), err)
	}
}
