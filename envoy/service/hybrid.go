package service

import (
	"context"
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/hybrid"
	"github.com/nats-io/nats.go"
	goredis "github.com/redis/go-redis/v9"
)

// HybridOptions tunes a HybridBackend. PoP and Redis are required.
type HybridOptions struct {
	PoP   string                  // this instance's PoP name, unique among the instances
	Redis goredis.UniversalClient // shared by every instance
	NATS  *nats.Conn              // gossip between instances; nil = off
	// Namespace prefixes every limit's Redis keys and NATS subjects; each
	// limit gets Namespace-<max>-<window ms>. "" = "el".
	Namespace  string
	Margin     float64       // headroom decided at Redis (hybrid.Config.Margin); 0 = 0.1
	FailClosed bool          // Redis unreachable for a request within the margin: deny (true) or decide locally
	Capacity   int           // identities per limit's view; 0 = hybrid's default
	Sync       time.Duration // sync interval; 0 = hybrid.DefaultSyncInterval
	Gossip     time.Duration // gossip interval; 0 = hybrid.DefaultGossipInterval
	PoPs       int           // instances that may admit one identity at once (hybrid.Config.PoPs)
	Clock      core.Clock    // nil = the system clock
	// OnNode, when set, is called with every node built (for its stats).
	OnNode func(name string, n *hybrid.Node)
}

// HybridBackend is the local-first limiter of sync/hybrid: each instance
// decides from its own view, reconciled with Redis in batches and gossiped
// over NATS, one hybrid.Node per distinct limit. The sliding window only.
// The zero value is not usable; build one with NewHybrid.
type HybridBackend struct{ p pool }

// NewHybrid returns a HybridBackend. Its nodes start their sync and gossip
// loops when built; Close flushes each to Redis. The caller closes the Redis
// client and the NATS connection after Close.
func NewHybrid(o HybridOptions) *HybridBackend {
	ns := o.Namespace
	if ns == "" {
		ns = "el"
	}
	margin := o.Margin
	if margin == 0 {
		margin = 0.1
	}
	b := &HybridBackend{}
	b.p.build = func(l core.Limit) (core.Limiter, error) {
		if l.Algorithm != core.SlidingWindow {
			return nil, fmt.Errorf("%w: the hybrid backend counts the sliding window only, not %s", core.ErrBadAlgorithm, l.Algorithm)
		}
		name := fmt.Sprintf("%s-%d-%d", ns, l.Max, l.WindowMillis())
		n, err := hybrid.New(hybrid.Config{
			PoP: o.PoP, Limit: l, Redis: o.Redis, NATS: o.NATS, Namespace: name,
			Margin: margin, FailClosed: o.FailClosed, Capacity: o.Capacity,
			PoPs: o.PoPs, Clock: o.Clock,
		})
		if err != nil {
			return nil, err
		}
		n.Start(o.Sync, o.Gossip)
		if o.OnNode != nil {
			o.OnNode(name, n)
		}
		return n, nil
	}
	b.p.close = func(ctx context.Context, l core.Limiter) error {
		return l.(*hybrid.Node).Close(ctx)
	}
	return b
}

// Limiter implements Backend; a limit other than the sliding window fails
// with core.ErrBadAlgorithm.
func (b *HybridBackend) Limiter(l core.Limit) (core.Limiter, error) { return b.p.get(l) }

// Close implements Backend: every node stops and flushes its own counts.
func (b *HybridBackend) Close(ctx context.Context) error { return b.p.closeAll(ctx) }

// Name implements Backend.
func (b *HybridBackend) Name() string { return "hybrid" }
