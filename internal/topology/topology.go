// Package topology asks a Redis Cluster client to reload its slot map after
// a failed call, at most once per MinInterval. go-redis reloads the map by
// itself only on a MOVED or ASK reply or every ClusterStateReloadInterval
// (60 s by default), and a dead master sends neither: without a reload on
// error, after a replica took over, a client would keep sending the dead
// master's keys to its address for up to that interval. go-redis runs one
// reload at a time but, when a reload fails (the whole cluster
// unreachable), starts the next one at once; the interval here bounds that
// sweep of CLUSTER SLOTS calls whatever the outcome. Used by the Redis
// backend.
package topology

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/edgelimit/edgelimit/internal/clientkind"
	goredis "github.com/redis/go-redis/v9"
)

// MinInterval is the least time between two reloads a Reloader requests.
const MinInterval = 200 * time.Millisecond

// Reloader requests slot-map reloads of one client. Its zero value is ready;
// it is safe for concurrent use.
type Reloader struct {
	last atomic.Int64 // unix ns of the last reload requested
	// reload is the request itself; nil means the client's ReloadState.
	reload func(clientkind.Cluster)
	// now is the clock in unix ns; nil means time.Now.
	now func() int64
}

// AfterError requests a background reload of c's slot map (its
// ReloadState) when c is a Redis Cluster client (clientkind.Cluster: a
// *goredis.ClusterClient or a type embedding one) and no reload was
// requested in the last MinInterval; it reports whether it requested one.
// Other clients are left alone.
func (r *Reloader) AfterError(c goredis.UniversalClient) bool {
	cc, ok := clientkind.AsCluster(c)
	if !ok {
		return false
	}
	var now int64
	if r.now != nil {
		now = r.now()
	} else {
		now = time.Now().UnixNano()
	}
	last := r.last.Load()
	if now-last < int64(MinInterval) || !r.last.CompareAndSwap(last, now) {
		return false
	}
	if r.reload != nil {
		r.reload(cc)
	} else {
		cc.ReloadState(context.Background())
	}
	return true
}
