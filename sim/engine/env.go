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
	Trace         *traffic.Trace
	Limit         core.Limit
	Net           netmodel.Model
	Start         time.Time       // simulated instant of the trace's time 0, window-aligned
	SyncInterval  time.Duration   // budget: time between one PoP's Syncs
	FreeCredit    int64           // budget: budget.Config.FreeCredit (0: its default, negative: none)
	BudgetPoPs    int             // budget: budget.Config.PoPs of every Machine (0: the trace's PoPs; fewer models a misconfigured deployment)
	BudgetBuckets int             // budget: budget.Config.Buckets of every Machine (0: Buckets of the trace's size, see budgetBuckets)
	RedisAddr     string          // host:port of the Redis every mode shares, or a comma-separated list of Redis Cluster nodes
	RedisCluster  bool            // use a cluster client even for a single RedisAddr
	Skew          []time.Duration // per PoP: its clock's offset from true time (nil: none)
	NATSURL       string          // NATS server for gossip (budget-gossip)
	Namespace     string          // prefix of every Redis key and NATS subject of the run
	Progress      func(done int)
	// Network is "honest" (the default, also for ""): every Redis call,
	// reply and gossip message takes its modelled one-way delay, drawn
	// with Jitter, and Faults apply; or "ideal": a Redis call and its reply
	// take effect at the request's instant (the model before the honest
	// one, kept so its cost can be seen).
	Network string
	Jitter  float64         // honest: mean jitter of a one-way delay, a fraction of its base
	Faults  netmodel.Faults // honest: what goes wrong during the run
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
	e := &Env{Trace: tr, Limit: core.PerWindow(c.Limit, c.Window), Net: net,
		Start: StartOf(c.Window), SyncInterval: 100 * time.Millisecond}
	e.keys = make([]string, c.Identities)
	for i := range e.keys {
		e.keys[i] = "id" + strconv.Itoa(i)
	}
	return e
}

// StartOf is Env.Start for a trace of window: the simulated instant of its
// time 0, 2026-01-01T00:00:00Z aligned down on a window boundary.
func StartOf(window time.Duration) time.Time {
	w := window.Milliseconds()
	return time.UnixMilli(epoch / w * w)
}

// MaxSkew is the largest clock skew a run of window can model (Env.Skew's
// offsets spread over ±it, netmodel.Skews): the PoP furthest behind then
// reads the Unix epoch at the trace's start, and a clock further back is a
// time before the epoch, which every limiter refuses (core.ErrBadTime).
// For a 10 s window it is 490,896 hours, about 56 years.
func MaxSkew(window time.Duration) time.Duration {
	return time.Duration(StartOf(window).UnixMilli()) * time.Millisecond
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
// redis backend's WithExpirySlack, budget.Config.ExpirySlack). Redis
// expires keys by the wall clock while a run plays virtual time, which may
// pass much more slowly: a 100ms window can last seconds of wall time, and
// keys expiring mid-run would make the figures wrong and vary from run to
// run. The slack, the trace's simulated length plus expiryMargin, keeps
// every key for the whole run; each run writes under its own namespace, so
// keys outliving their windows change nothing.
func (e *Env) expirySlack() time.Duration { return e.Trace.Duration + expiryMargin }

func (e *Env) progress(done int) {
	if e.Progress != nil {
		e.Progress(done)
	}
}

// Ideal reports whether e runs on the ideal network.
func (e *Env) Ideal() bool { return e.Network == "ideal" }
