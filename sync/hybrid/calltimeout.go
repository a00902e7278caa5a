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
