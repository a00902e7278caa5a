package budget

import (
	"fmt"
	"math"
	"slices"

	"github.com/edgelimit/edgelimit/core"
)

// Source names what made a Decision.
type Source uint8

// The sources of a Decision, in the order Machine.decide tries them.
const (
	SrcDenyCache Source = iota // cached deny-until, from C alone
	SrcFull                    // denied locally: Redis last said the identity has no headroom
	SrcGrant                   // admitted from a grant balance
	SrcFree                    // admitted from this PoP's free credit
	SrcFallback                // decided on the view while Redis is down
	SrcRedis                   // decided at Redis (one round trip)
	nSources
)

var sourceNames = [nSources]string{"deny-cache", "full", "grant", "free", "fallback", "redis"}

func (s Source) String() string {
	if s < nSources {
		return sourceNames[s]
	}
	return fmt.Sprintf("Source(%d)", uint8(s))
}

// Decision is a Machine's verdict on one request. The zero value is a
// denial by the deny cache.
type Decision struct {
	Allowed bool
	Source  Source
}

// Stats counts a Machine's work. The zero value is no work.
type Stats struct {
	Decisions [nSources]uint64 // by Source
	Calls     uint64           // script calls planned (decisions and batches, retries included)
	Items     uint64           // items in those calls
	// RoundTrips counts the round trips those calls take on one Redis
	// node: one per decision Call, one per Tick that planned batches (its
	// batches go in one pipeline, see ExecAll).
	RoundTrips uint64
}

// Machine is the budget limiter's sans-IO core for one PoP: no goroutines,
// no clock, no I/O, not safe for concurrent use (Limiter wraps it). Every
// time it is handed is in ms of the PoP's clock. Build one with NewMachine.
type Machine struct {
	cfg    Config
	w      int64 // window, ms
	view   map[string]*entry
	groups []groupState
	down   bool // the last call failed; cleared by the next that succeeds
	stats  Stats
}

// groupState is one group's Sync pipeline: its last sequence number, and
// the batch in flight or to be sent again (its reply never came).
type groupState struct {
	seq      uint64
	inflight *Call
	retry    *Call
}

// pending is the request a decision Call answers.
type pending struct {
	e *entry
	n int64
}

// grantSlot is a grant balance and Redis' window it was granted in.
type grantSlot struct{ win, bal int64 }

// entry is one identity's view at this PoP.
type entry struct {
	key        string
	bucket     int
	grants     [2]grantSlot
	ops        []Op             // admissions and returns not yet in a batch
	claimed    int64            // free slots up to this window are consumed here
	usedFree   int64            // the last window whose slot free credit used (its op claims it)
	sentClaims int64            // slot claims up to this window were sent
	lowW       int64            // Redis window of the lower bound below
	lowC       int64            // C_lowW at Redis (a lower bound of the truth)
	lowPrev    int64            // C_{lowW−1}
	own        core.WindowState // units admitted here, by window, for the fallback
	denyUntil  int64
	fullUntil  int64
	demand     int64   // units asked since the last Sync
	rate       float64 // units asked per ms, averaged over about a window
	lastPlan   int64   // when the last Sync planned e (ms; 0: never)
	headroom   int64   // Redis' last headroom for e (-1: unknown)
	inBatch    bool    // part of a batch whose reply has not come
	asking     int     // decision Calls in flight
	renounce   bool    // Redis named e hot: the next Sync claims its slots
}

// NewMachine returns a Machine for cfg, or an error wrapping ErrConfig.
func NewMachine(cfg Config) (*Machine, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if c.Incarnation == 0 {
		return nil, fmt.Errorf("%w: Incarnation is 0 (draw a random one per process)", ErrConfig)
	}
	return &Machine{cfg: c, w: c.Limit.WindowMillis(), view: map[string]*entry{}, groups: make([]groupState, c.Groups)}, nil
}

// Config returns the Machine's configuration, defaults filled in.
func (m *Machine) Config() Config { return m.cfg }

// Stats returns the Machine's counters.
func (m *Machine) Stats() Stats { return m.stats }

// Len is the number of identities in the view.
func (m *Machine) Len() int { return len(m.view) }

func (m *Machine) window(now int64) int64 { return floorDiv(now, m.w) }

func (m *Machine) entry(key string) *entry {
	e := m.view[key]
	if e == nil {
		e = &entry{key: key, bucket: m.bucket(key), claimed: math.MinInt64, sentClaims: math.MinInt64, usedFree: math.MinInt64, lowW: math.MinInt64, headroom: -1}
		m.view[key] = e
	}
	return e
}

// Request decides n units of key at now. When the view cannot decide, it
// returns the decision Call to make; the caller runs it (Exec) and hands
// the outcome to Complete, which returns the Decision.
func (m *Machine) Request(now int64, key string, n int64) (Decision, *Call) {
	e := m.entry(key)
	e.demand += n
	return m.decide(now, e, n, nil)
}

// Complete applies the outcome of decision Call c at now (the reply's
// arrival) and returns the request's Decision: Redis' verdict, or, when
// err is not nil, a verdict on the view as it is now (see decide).
func (m *Machine) Complete(now int64, c *Call, r *Result, err error) Decision {
	c.req.e.asking--
	if err != nil || r == nil {
		m.down = true
		return m.decideNoCall(now, c.req.e, c.req.n)
	}
	m.down = false
	e, it := c.req.e, r.Items[0]
	m.absorb(e, r, it)
	d := Decision{Allowed: it.Allowed == 1, Source: SrcRedis}
	m.stats.Decisions[SrcRedis]++
	if d.Allowed {
		e.own.DecideSliding(m.cfg.Limit, now, c.req.n, true)
	}
	return d
}

// decideNoCall is decide for a request that may not ask Redis again.
func (m *Machine) decideNoCall(now int64, e *entry, n int64) Decision {
	d, c := m.decide(now, e, n, errNoCall{})
	if c != nil {
		panic("budget: decide planned a call it was told not to")
	}
	return d
}

type errNoCall struct{}

// decide is the Machine's one decision function: cached deny-until → grant
// balance → free credit → Redis down (or noCall): fallback on the view →
// known full, or contested and busy here (denied here, its demand asked as
// grant by the next Sync, unless Config.AskWhenContested) → a decision
// Call to Redis.
func (m *Machine) decide(now int64, e *entry, n int64, noCall any) (Decision, *Call) {
	x := m.window(now)
	verdict := func(ok bool, s Source) (Decision, *Call) {
		m.stats.Decisions[s]++
		if ok {
			e.own.DecideSliding(m.cfg.Limit, now, n, true)
		}
		return Decision{Allowed: ok, Source: s}, nil
	}
	if now < e.denyUntil {
		return verdict(false, SrcDenyCache)
	}
	if m.spendGrant(e, x, n) {
		return verdict(true, SrcGrant)
	}
	if n <= m.cfg.FreeCredit && x > e.claimed {
		e.claimed, e.usedFree = x, x
		e.addOp(Op{X: x, GW: GWFree, U: n})
		return verdict(true, SrcFree)
	}
	if m.down || noCall != nil {
		if m.cfg.FailClosed {
			return verdict(false, SrcFallback)
		}
		ok := m.fallbackAdmits(now, e, n)
		if ok {
			e.addOp(Op{X: x, GW: GWFallback, U: n})
		}
		return verdict(ok, SrcFallback)
	}
	if now < e.fullUntil || (!m.cfg.AskWhenContested && m.contested(e) && m.busy(e)) {
		return verdict(false, SrcFull)
	}
	it := Item{Key: e.key, Bucket: e.bucket, N: n, Want: m.topUp(e, x)}
	it.Claims = m.claims(e, x)
	c := &Call{Group: m.group(e.bucket), Now: now, Items: []Item{it}, req: &pending{e: e, n: n}}
	e.asking++
	m.stats.Calls++
	m.stats.Items++
	m.stats.RoundTrips++
	return Decision{}, c
}

// spendGrant takes n units from e's live grants (granted in window x−1 or
// x, the older first) when they hold that many, recording the spend.
func (m *Machine) spendGrant(e *entry, x, n int64) bool {
	var have int64
	for _, g := range e.grants {
		if g.bal > 0 && (g.win == x || g.win == x-1) {
			have += g.bal
		}
	}
	if have < n {
		return false
	}
	order := []int{0, 1}
	if e.grants[1].win < e.grants[0].win {
		order = []int{1, 0}
	}
	for _, i := range order {
		g := &e.grants[i]
		if n == 0 || g.bal == 0 || (g.win != x && g.win != x-1) {
			continue
		}
		u := min(n, g.bal)
		g.bal -= u
		n -= u
		e.addOp(Op{X: x, GW: g.win, U: u})
	}
	return true
}

// fallbackAdmits decides n units on the view while Redis is down: the lower
// bound of C plus what this PoP admitted, under core's sliding rule.
func (m *Machine) fallbackAdmits(now int64, e *entry, n int64) bool {
	x := m.window(now)
	own := e.own
	own.Roll(x)
	cur, prev := own.Cur, own.Prev
	switch e.lowW {
	case x:
		cur, prev = cur+e.lowC, prev+e.lowPrev
	case x - 1:
		prev += e.lowC
	}
	return core.SlidingAdmits(core.SlidingEstimate(cur, prev, now-x*m.w, m.w), m.cfg.Limit.Max, n)
}

// claims returns the free-slot claims an item about e sent in window x
// carries: every slot from x−1 on consumed here and not yet claimed, and,
// when e is contested or hot, every slot through x+1 (the current and
// next windows' slots are given up); it marks them consumed and sent. Far
// from the limit a reserved slot costs no one, so a calm identity keeps
// its free credit in every window. A slot
// free credit used is not among them: the op reporting the use claims it,
// so Redis never sees the claim without the units.
func (m *Machine) claims(e *entry, x int64) []int64 {
	through := e.claimed
	if m.contested(e) || e.renounce {
		through = max(through, x+1)
	}
	var out []int64
	for y := max(e.sentClaims+1, x-1); y <= through; y++ {
		if y != e.usedFree {
			out = append(out, y)
		}
	}
	e.claimed, e.sentClaims = through, through
	return out
}

// contested reports whether Redis last said e has little headroom (under a
// quarter of the limit): grants then cover a short horizon and an idle
// PoP returns its balance at once, so the headroom follows demand.
func (m *Machine) contested(e *entry) bool {
	return e.headroom >= 0 && e.headroom < m.cfg.Limit.Max/4
}

// horizon is the ms a contested identity's grant should last: four Sync
// intervals plus RTTs (measured on pop-sim against two: mixed near-limit
// clients 0.927 -> 0.948 of pure Redis' quota, p99 95 -> 73 ms; the crowd
// of flash-crowd 0.930 -> 0.922).
func (m *Machine) horizon() float64 {
	return 4 * float64((m.cfg.SyncInterval + m.cfg.RTT).Milliseconds())
}

// busy reports whether e is expected to ask here again before a grant
// asked now lands (one unit or more over the horizon): denying it here
// then costs one request, and the next Sync's grant serves the next ones.
// A sparse identity is not busy: it is sent to Redis, since a grant asked
// for it would come after its request and sit unused.
func (m *Machine) busy(e *entry) bool {
	rate := max(e.rate, float64(e.demand)/float64(m.cfg.SyncInterval.Milliseconds()))
	return rate*m.horizon() >= 1
}

// topUp is the grant e should ask for at window x: its demand rate over the
// horizon (a window when e is far from its limit; twice the Sync interval
// plus the RTT when contested), at least 1 while it has demand and at most
// a quarter of the limit, minus its live balance.
func (m *Machine) topUp(e *entry, x int64) int64 {
	rate := max(e.rate, float64(e.demand)/float64(m.cfg.SyncInterval.Milliseconds()))
	horizon := float64(m.w)
	if m.contested(e) {
		horizon = m.horizon()
	}
	want := min(int64(math.Ceil(rate*horizon)), max(1, m.cfg.Limit.Max/4))
	if e.demand > 0 {
		want = max(want, 1)
	}
	var bal int64
	for _, g := range e.grants {
		if g.win >= x { // a grant of x−1 ends with x, and an item gives up x+1's free slot
			bal += g.bal
		}
	}
	return max(0, want-bal)
}

// addOp records op in e's unreported ops, merged with one of the same
// windows.
func (e *entry) addOp(op Op) {
	for i := range e.ops {
		if e.ops[i].X == op.X && e.ops[i].GW == op.GW {
			e.ops[i].U += op.U
			return
		}
	}
	e.ops = append(e.ops, op)
}

// absorb applies Redis' answer about e: the grant, the lower bound of C,
// and a deny-until when C alone already denies a unit.
func (m *Machine) absorb(e *entry, r *Result, it ItemResult) {
	if it.Grant > 0 {
		i := 0
		if e.grants[1].win == r.Window || (e.grants[0].win != r.Window && e.grants[1].win < e.grants[0].win) {
			i = 1
		}
		if e.grants[i].win != r.Window {
			e.grants[i] = grantSlot{win: r.Window}
		}
		e.grants[i].bal += it.Grant
		e.fullUntil = 0
	}
	if r.Window >= e.lowW {
		e.lowW, e.lowC, e.lowPrev = r.Window, it.CW, it.CPrev
		elapsed := r.Now - r.Window*m.w
		if !core.SlidingAdmits(core.SlidingEstimate(it.CW, it.CPrev, elapsed, m.w), m.cfg.Limit.Max, 1) {
			retry := core.SlidingRetryMillis(it.CW, it.CPrev, elapsed, m.w, m.cfg.Limit.Max, 1)
			e.denyUntil = max(e.denyUntil, r.Now+retry)
		}
	}
	if it.Headroom > 0 || it.Grant > 0 {
		e.fullUntil = 0
	} else {
		// Known full: requests the budget cannot cover are denied here
		// until one unit would fit; Syncs still ask grants for the demand.
		e.fullUntil = max(e.fullUntil, r.Now+max(1, it.Retry))
	}
	e.headroom = it.Headroom
}

// Tick plans the Sync at now: per group, the batch whose reply never came
// (sent again, same sequence number) or a new batch of every identity with
// something to report or to ask, unless that group's batch is in flight.
// While Redis is down and nothing else goes out, an empty batch probes it.
// The caller runs each Call (Exec) and hands its outcome to Finish.
func (m *Machine) Tick(now int64) []*Call {
	x := m.window(now)
	batches := make([]*Call, len(m.groups))
	for _, e := range m.view {
		g := m.group(e.bucket)
		gs := &m.groups[g]
		if e.inBatch || gs.inflight != nil || gs.retry != nil {
			continue
		}
		it, ok := m.plan(e, x, now)
		if !ok {
			if m.idle(e, now, x) {
				delete(m.view, e.key)
			}
			continue
		}
		if batches[g] == nil {
			batches[g] = &Call{Group: g, Now: now}
		}
		batches[g].Items = append(batches[g].Items, it)
		e.inBatch = true
	}
	var out []*Call
	for g := range m.groups {
		gs := &m.groups[g]
		switch {
		case gs.inflight != nil:
			continue
		case gs.retry != nil:
			gs.inflight, gs.retry = gs.retry, nil
		case batches[g] != nil:
			gs.seq++
			batches[g].Seq = gs.seq
			slices.SortFunc(batches[g].Items, func(a, b Item) int { return cmpString(a.Key, b.Key) })
			gs.inflight = batches[g]
		case m.down && len(out) == 0 && g == len(m.groups)-1:
			gs.seq++ // nothing to send while Redis is down: an empty batch probes it
			gs.inflight = &Call{Group: g, Seq: gs.seq, Now: now}
		default:
			continue
		}
		m.stats.Calls++
		m.stats.Items += uint64(len(gs.inflight.Items))
		out = append(out, gs.inflight)
	}
	if len(out) > 0 {
		m.stats.RoundTrips++
	}
	return out
}

// plan builds e's item of a Sync at now, window x: its returns (every
// balance once it is quiet), its top-up, and, when it sends an item, its
// unreported ops and claims. Far from its limit, an identity's spends are
// not worth a Redis call of their own (unreported, they stay inside G or R
// at Redis): they wait for an item sent for another reason. ok is false
// when e has nothing to send.
func (m *Machine) plan(e *entry, x, now int64) (Item, bool) {
	dt := float64(m.cfg.SyncInterval.Milliseconds())
	if e.lastPlan != 0 && now > e.lastPlan {
		dt = float64(now - e.lastPlan)
	}
	a := min(1, dt/float64(m.w))
	e.rate += a * (float64(e.demand)/dt - e.rate)
	e.lastPlan = now
	for i := range e.grants {
		if e.grants[i].win < x-1 {
			e.grants[i] = grantSlot{} // expired with its window: Redis drops it too
		}
	}
	e.ops = slices.DeleteFunc(e.ops, func(o Op) bool { return o.X < x-1 && o.GW < x-2 }) // no estimate reads them
	contested := m.contested(e)
	// Without demand since the last Sync, keep what the demand rate
	// expects over the grant's horizon (a window; the Sync horizon when
	// contested) and return the rest.
	quiet := e.demand == 0
	returns := false
	if quiet {
		keep := e.rate * float64(m.w)
		if contested {
			keep = e.rate * m.horizon()
		}
		k := int64(0)
		if e.rate*float64(m.w) >= 0.5 {
			k = max(1, int64(math.Ceil(keep)))
		}
		order := []int{0, 1}
		if e.grants[1].win > e.grants[0].win {
			order = []int{1, 0} // keep the newer grant, which lasts longer
		}
		for _, i := range order {
			g := &e.grants[i]
			u := min(g.bal, k)
			k -= u
			if back := g.bal - u; back > 0 {
				e.addOp(Op{X: -1, GW: g.win, U: back})
				g.bal = u
				returns = true
			}
		}
	}
	var want int64
	if !quiet {
		want = m.topUp(e, x)
	}
	e.demand = 0
	if want == 0 && !returns && !e.renounce && !(contested && len(e.ops) > 0) {
		return Item{}, false
	}
	e.renounce = false
	it := Item{Key: e.key, Bucket: e.bucket, Want: want, Ops: e.ops, Claims: m.claims(e, x)}
	e.ops = nil
	return it, true
}

// idle reports whether e holds nothing worth keeping at now in window x.
func (m *Machine) idle(e *entry, now, x int64) bool {
	return e.asking == 0 && e.demand == 0 && e.rate*float64(m.w) < 0.01 && len(e.ops) == 0 && e.claimed < x &&
		e.grants[0].bal == 0 && e.grants[1].bal == 0 && now >= e.denyUntil && e.own.Index < x-1
}

// Finish applies the outcome of Sync batch c: on success each item's grant
// and bounds; on error the batch is kept and sent again by the next Tick
// (same sequence number, so Redis applies it at most once).
func (m *Machine) Finish(c *Call, r *Result, err error) {
	gs := &m.groups[c.Group]
	if gs.inflight == c {
		gs.inflight = nil
	}
	if err != nil || r == nil {
		m.down = true
		gs.retry = c
		return
	}
	m.down = false
	x := m.window(r.Now)
	for _, h := range r.Hot {
		e := m.entry(h.Key)
		if e.sentClaims < x+1 {
			e.claimed = max(e.claimed, x+1) // no free credit of it here until x+2
			e.renounce = true
		}
	}
	for i, it := range c.Items {
		e := m.view[it.Key]
		if e == nil {
			continue
		}
		e.inBatch = false
		m.absorb(e, r, r.Items[i])
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
