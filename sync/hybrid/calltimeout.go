package hybrid

import (
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// DefaultCallTimeout is the Redis call timeout assumed for a client whose
// own cannot be read (not a go-redis Client, ClusterClient or Ring) or
// that has none: go-redis' default ReadTimeout.
const DefaultCallTimeout = 5 * time.Second

// callTimeout is how long a call to rdb may wait on Redis: the client's
// ReadTimeout as go-redis resolved it, or DefaultCallTimeout when it has
// none or cannot be read.
func callTimeout(rdb goredis.UniversalClient) time.Duration {
	var d time.Duration
	switch c := rdb.(type) {
	case *goredis.Client:
		d = c.Options().ReadTimeout
	case *goredis.ClusterClient:
		d = c.Options().ReadTimeout
	case *goredis.Ring:
		d = c.Options().ReadTimeout
	}
	if d <= 0 {
		return DefaultCallTimeout
	}
	return d
}

// DeadlineBound reports whether every wait of the Node's decisions ends by
// their ctx's deadline: true when its Redis client is a go-redis Client,
// ClusterClient or Ring with ContextTimeoutEnabled (without it go-redis
// waits its ReadTimeout on a Redis that accepts connections but does not
// answer, whatever the ctx). A decision from the view never waits. An
// HTTP middleware may then call the Node on the request's goroutine and
// take its decision however late the machine runs it, instead of
// abandoning it at the deadline.
func (n *Node) DeadlineBound() bool {
	switch c := n.cfg.Redis.(type) {
	case *goredis.Client:
		return c.Options().ContextTimeoutEnabled
	case *goredis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *goredis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return false
}
