package engine

import (
	"strconv"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sim/netmodel"
	"github.com/edgelimit/edgelimit/sim/traffic"
)

// Env is everything a mode needs to run one trace. Build it with NewEnv.
type Env struct {
	Trace        *traffic.Trace
	Limit        core.Limit
	Net          netmodel.Model
	Start        time.Time       // simulated instant of the trace's time 0, window-aligned
	SyncInterval time.Duration   // hybrid: time between one PoP's reconciles
	Margin       float64         // hybrid: headroom margin
	RedisAddr    string          // host:port of the Redis every mode shares, or a comma-separated list of Redis Cluster nodes
	RedisCluster bool            // use a cluster client even for a single RedisAddr
	Skew         []time.Duration // per PoP: its clock's offset from true time (nil: none)
	Capacity     int             // hybrid: view capacity of each PoP; 0 = every identity
	NATSURL      string          // NATS server for hybrid gossip
	Namespace    string          // prefix of every Redis key and NATS subject of the run
	Progress     func(done int)
	// Network is "honest" (the default, also for ""): every Redis call,
	// reply and gossip message takes its modelled one-way delay, drawn
	// with Jitter, and Faults apply; or "ideal": a Redis call and its reply
	// take effect at the request's instant (the model before the honest
	// one, kept so its cost can be seen).
	Network string
	Jitter  float64         // honest: mean jitter of a one-way delay, a fraction of its base
	Faults  netmodel.Faults // honest: what goes wrong during the run
	// RedisClock runs the hybrid with hybrid.Config.RedisClock: each PoP
	// learns its offset to Redis' clock from its Syncs. Redis' clock is the
	// true virtual time at a batch's arrival (honest network only: the real
	// Redis TIME is the wall clock).
	RedisClock bool
	// Exposure runs the hybrid with hybrid.Config.PoPs set to the trace's
	// PoPs: a PoP's own units Redis has not acknowledged count once per
	// other PoP against the margin (rate-aware exposure).
	Exposure bool
	// CalmShare is hybrid.Config.CalmShare for the modes that gossip
	// without escrow (it needs gossip, and escrow's grants weigh only what
	// Redis holds); the others run without it.
	CalmShare float64
	// Owners runs the hybrid modes without escrow with
	// hybrid.Config.Owners: a PoP that alone sends an identity decides it
	// within the margin as its sole holder (escrow has sole holders
	// already).
	Owners bool
	// Worst is how many of the most over-admitted identities each Result
	// lists with their traffic second by second (Result.Worst); 0 lists
	// none.
	Worst int
	keys  []string
	ref   []bool // the reference's decisions (reference), once computed
}

// epoch is the simulated wall clock's origin: 2026-01-01T00:00:00Z.
const epoch = 1767225600000 // ms

// NewEnv returns an Env for tr with the trace's limit, the start aligned on
// a window boundary (so the trace's boundary bursts fall on real ones), and
// one key string per identity.
func NewEnv(tr *traffic.Trace, net netmodel.Model) *Env {
	c := tr.Config
	w := c.Window.Milliseconds()
	e := &Env{Trace: tr, Limit: core.PerWindow(c.Limit, c.Window), Net: net,
		Start: time.UnixMilli(epoch / w * w), SyncInterval: 100 * time.Millisecond}
	e.keys = make([]string, c.Identities)
	for i := range e.keys {
		e.keys[i] = "id" + strconv.Itoa(i)
	}
	return e
}

// Key is identity id's key string.
func (e *Env) Key(id int32) string { return e.keys[id] }

// At is the true simulated time of request i: what the ground truth judges
// on.
func (e *Env) At(i int) time.Time { return e.Start.Add(e.Trace.Requests[i].At) }

// PoPAt is request i's time by the clock of the PoP it arrives at: what
// that PoP's limiter is given.
func (e *Env) PoPAt(i int) time.Time {
	r := e.Trace.Requests[i]
	return e.Clock(int(r.PoP), r.At)
}

// Clock is PoP p's clock reading at offset t of the trace: true time plus
// its skew.
func (e *Env) Clock(p int, t time.Duration) time.Time {
	if p < len(e.Skew) {
		t += e.Skew[p]
	}
	return e.Start.Add(t)
}

// expiryMargin is how much wall time a run may take beyond its trace's
// simulated length before Redis expires keys it still needs.
const expiryMargin = time.Hour

// expirySlack is added to the TTL of every Redis key a run writes (the
// redis backend's WithExpirySlack, the hybrid's Config.ExpirySlack). Redis
// expires keys by the wall clock while a run plays virtual time, which may
// pass much more slowly: a 100ms window can last seconds of wall time, and
// keys expiring mid-run would make the figures wrong and vary from run to
// run. The slack, the trace's simulated length plus expiryMargin, keeps
// every key for the whole run; each run writes under its own namespace, so
// keys outliving their windows change nothing.
func (e *Env) expirySlack() time.Duration { return e.Trace.Duration + expiryMargin }

// capacity is the view capacity of each hybrid PoP.
func (e *Env) capacity() int {
	if e.Capacity > 0 {
		return e.Capacity
	}
	return max(e.Trace.Config.Identities, 1)
}

func (e *Env) progress(done int) {
	if e.Progress != nil {
		e.Progress(done)
	}
}

// Ideal reports whether e runs on the ideal network.
func (e *Env) Ideal() bool { return e.Network == "ideal" }

// exposurePoPs is hybrid.Config.PoPs for the run: the trace's PoPs with
// Exposure, else 0 (off).
func (e *Env) exposurePoPs() int {
	if !e.Exposure {
		return 0
	}
	return e.Trace.Config.PoPs
}

// owners is hybrid.Config.Owners for a hybrid mode: Owners without escrow
// and with a margin (at margin 0 nothing is decided within one).
func (e *Env) owners(escrow bool) bool { return e.Owners && !escrow && e.Margin > 0 }

// calmShare is hybrid.Config.CalmShare for a hybrid mode: CalmShare when it
// gossips without escrow, else 0.
func (e *Env) calmShare(gossip, escrow bool) float64 {
	if !gossip || escrow {
		return 0
	}
	return e.CalmShare
}
