package budget

import (
	"fmt"
	"math"

	"github.com/edgelimit/edgelimit/core"
)

// Source names what made a Decision.
type Source uint8

// The sources of a Decision, in the order Machine.decide tries them (a
// request Redis denied that what the PoP holds by the reply covers is
// admitted from it: SrcGrant or SrcFree, see Machine.Complete).
const (
	SrcDenyCache Source = iota // cached deny-until, from C alone
	SrcFull                    // denied locally: Redis' last reply left the identity no headroom, NoWait's heavy identity, or a flood with a Call out (Machine.decide)
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
// denial by the deny cache. Parked, on a denial Complete returns, says the
// verdict is not final: Redis denied the request, and this lone PoP's Sync
// batch in flight asked a grant of its identity, which may pay it (park.go); the
// driver holds the caller until Finish of that batch returns the Call
// (then Complete returns the final Decision) or, for a caller that will
// not wait, takes the denial (Unpark). A driver must do one or the other:
// one that reports the parked denial as final and ignores Finish's return
// tells its caller no while the Machine may pay the request and count it.
type Decision struct {
	Allowed bool
	Source  Source
	Parked  bool
}

// Stats counts a Machine's work. The zero value is no work.
type Stats struct {
	Decisions [nSources]uint64 // by Source
	// Calls counts the script calls sent to Redis: the Calls Request,
	// Tick and Reset planned (decisions; Sync batches and decisions'
	// reports sent again, retries included; Resets), less those the
	// driver took back unsent (Unsent: a Limiter's caller whose context
	// had ended before the call went out). A call sent counts whether or
	// not Redis answered (a refused connection, a timeout); Peek's calls
	// are not counted. Items counts the items in those calls.
	Calls uint64
	Items uint64
	// RoundTrips counts the round trips those calls take on one Redis
	// node: one per decision or Reset Call, one per Tick that planned
	// Calls (they go in one pipeline, see ExecAll), none once every Call
	// of it was taken back unsent.
	RoundTrips uint64
	Visits     uint64 // identities Ticks looked at (planned or swept)
	Promoted   uint64 // light records made full entries
	// PaidLate counts the requests Redis denied that what this PoP held
	// when the reply came paid (Complete; counted under that Source in
	// Decisions too, though they waited a round trip).
	PaidLate uint64
	// Parked counts the denials Complete parked for a grant in flight
	// (park.go); PaidParked those of them paid once the batch landed, from
	// the grant or this PoP's free slot (counted in PaidLate too).
	Parked, PaidParked uint64
	// GossipSent counts the messages Gossip returned; GossipDenies the
	// heard identities whose deny-until Hear set or extended. A Limiter
	// with UseNATS also counts the payloads it dropped as malformed and
	// those it failed to publish.
	GossipSent, GossipDenies, GossipMalformed, GossipLost uint64
}

// Machine is the budget limiter's sans-IO core for one PoP: no goroutines,
// no clock, no I/O, not safe for concurrent use (Limiter wraps it). Every
// time it is handed is in ms of the PoP's clock. Build one with NewMachine.
type Machine struct {
	cfg         Config
	w           int64               // window, ms
	view        map[string]*entry   // full entries
	lights      [2]map[string]light // light records of windows lightX and lightX−1 (light.go)
	lightX      int64
	ren         renounced // identities named hot that this PoP holds nothing else of (renounce.go)
	forgot      int64     // the latest window whose slot state may have been dropped (forget.go)
	tickX       int64     // the latest window a Tick ran in: the tiers roll at most one window past it (forget.go)
	clockAt     int64     // the PoP's clock as last read, by a Tick or Clock (ms; math.MinInt64: none): waits of a call stamped ahead count from it (anchor.go)
	space       string    // Keyspace(Namespace, Limit): every key's hash tag starts with it (tag)
	all         []*entry  // the full entries; e.slot is e's index (Tick's sweep walks it)
	dirty       []*entry  // entries to plan at the next Tick (e.queued)
	sweep       int       // the next index of all the sweep visits
	groups      []groupState
	down        bool             // the last call failed; cleared by the next that succeeds
	graceUntil  int64            // after an outage, contested identities stay on the fallback until then (recovered)
	lease       int64            // the least of the groups' leased: free credit is spent in windows up to it (lease.go)
	leaseFrom   int64            // the greatest of the groups' leasedFrom
	reports     reports          // decision Calls carrying reports (reports.go)
	rseq        uint64           // the last Reset's Call (its guard's sequence)
	id          string           // sender name in gossip (ID)
	told        []*entry         // identities to name in the next Gossip (e.telling)
	resetX      map[string]int64 // identities Reset here: heard counts of windows up to this one may predate the Reset (gossip.go, resetHeard)
	resetPrune  int              // resetX's size at which ResetDone next drops its stale records
	redis       redisClock       // how far Redis' clock runs ahead of this PoP's, from the Syncs' replies (redisclock.go)
	stats       Stats
	oneWay      float64 // ms: half a decision Call's round trip, averaged (age.go)
	oneWayKnown bool    // a decision Call's reply came back: oneWay holds a sample
}

// groupState is one group's Sync pipeline: its last sequence number, the
// batch in flight or to be sent again (its reply never came), and its hot
// cursor: the last hot identity's order Redis listed to this PoP in window
// hotWin (see lua/budget.lua).
type groupState struct {
	seq            uint64
	inflight       *Call
	retry          *Call
	hotWin, hotCur int64
	leased         int64 // Redis counts this PoP among the free-credit spenders of windows up to this one (lease.go)
	leasedFrom     int64 // the first window of the lease it may spend in (lease.go, "the first count")
	checkedTo      int64 // Redis has recorded this PoP's checks through this window (lease.go)
	keptFrom       int64 // windows of an earlier lease a later first window kept (lease.go, leaseTo)
	keptTo         int64
}

// pending is the request a decision Call answers.
type pending struct {
	e        *entry
	n        int64
	x        int64        // the request's window
	slot     int64        // units of this PoP's free slot of x the request takes (0: none)
	took     [2]grantSlot // units of its grants the request takes, by grant window
	done     bool         // Complete applied the Call's outcome
	decided  Decision     // and decided this
	parked   bool         // a denial waiting for a grant in flight (park.go)
	parkedAt int64        // when Redis' denial came
}

// grantSlot is a grant balance and Redis' window it was granted in.
type grantSlot struct{ win, bal int64 }

// entry is one identity's view at this PoP.
type entry struct {
	key        string
	grants     [2]grantSlot
	ops        *[]Op            // admissions and returns not yet in a batch (nil: none; pending, addOp, takeOps)
	claimed    int64            // free slots up to this window are consumed here
	usedFree   int64            // the last window whose slot free credit used (its op claims it)
	sentClaims int64            // slot claims up to this window were sent
	lowW       int64            // Redis window of the lower bound below
	lowC       int64            // C_lowW at Redis (a lower bound of the truth)
	lowPrev    int64            // C_{lowW−1}
	own        core.WindowState // units admitted here, by window, for the fallback
	denyUntil  int64
	fullUntil  int64
	retryAt    int64   // when Redis said the last request it denied here would fit (Describe's RetryAfter, for later denials too)
	heard      int64   // this PoP's time it sent the call of Redis' last reply about e (0: none)
	demand     int64   // units asked since the last Sync
	rate       float64 // units asked per ms, averaged over about a window
	lastPlan   int64   // when the last Sync planned e (ms; 0: never)
	born       int64   // when this PoP first saw it: its first request as a full entry, or its light record's last (ms; math.MinInt64: none yet)
	headroom   int64   // Redis' last headroom for e (-1: unknown)
	// int32 below (Config refuses Buckets past math.MaxInt32): with the
	// flags they fill 16 bytes, and with ops behind a pointer the entry's
	// 224 fit Go's 224-byte size class (TestEntrySize).
	bucket   int32 // Machine.bucket(key)
	asking   int32 // decision Calls in flight
	slot     int32 // index in the Machine's all
	inBatch  bool  // part of a batch whose reply has not come
	renounce bool  // Redis named e hot: the next Sync claims its slots
	queued   bool  // in the Machine's dirty list
	telling  bool  // in the Machine's told list (gossip.go)
	usedMask uint8 // bit k: the slot of window usedFree−k was used too (useFree); its op may still be unsent when a later window's item goes
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
	m := &Machine{cfg: c, id: senderID(c), w: c.Limit.WindowMillis(), view: map[string]*entry{}, lightX: math.MinInt64, ren: renounced{renX: math.MinInt64}, forgot: math.MinInt64, tickX: math.MinInt64, clockAt: math.MinInt64, space: Keyspace(c.Namespace, c.Limit), groups: make([]groupState, c.Groups), lease: math.MinInt64, leaseFrom: math.MinInt64}
	for g := range m.groups {
		m.groups[g] = groupState{leased: math.MinInt64, leasedFrom: math.MinInt64, checkedTo: math.MinInt64, keptFrom: math.MinInt64, keptTo: math.MinInt64}
	}
	return m, nil
}

// Config returns the Machine's configuration, defaults filled in.
func (m *Machine) Config() Config { return m.cfg }

// Stats returns the Machine's counters.
func (m *Machine) Stats() Stats { return m.stats }

// Down reports whether the Machine's last call failed (it decides on the
// view until one succeeds).
func (m *Machine) Down() bool { return m.down }

// Len is the number of identities in the view: full entries, light
// records and renounced records (renounce.go).
func (m *Machine) Len() int { return len(m.view) + m.lightLen() + m.renouncedLen() }

func (m *Machine) window(now int64) int64 { return floorDiv(now, m.w) }

// entry returns key's full entry, promoting its light record or its
// renounced record, or creating it (with the slots of forgotten windows
// consumed: forget.go).
func (m *Machine) entry(key string) *entry {
	e := m.view[key]
	if e == nil {
		e = &entry{key: key, bucket: int32(m.bucket(key)), claimed: math.MinInt64, sentClaims: math.MinInt64, usedFree: math.MinInt64, lowW: math.MinInt64, born: math.MinInt64, headroom: -1, slot: int32(len(m.all))}
		m.promote(e)
		m.unrenounce(e)
		m.fresh(e)
		m.view[key] = e
		m.all = append(m.all, e)
	}
	return e
}

// mark queues e for the next Tick's plan.
func (m *Machine) mark(e *entry) {
	if !e.queued {
		e.queued = true
		m.dirty = append(m.dirty, e)
	}
}

// drop removes e from the view.
func (m *Machine) drop(e *entry) {
	last := m.all[len(m.all)-1]
	m.all[e.slot], last.slot = last, e.slot
	m.all[len(m.all)-1] = nil
	m.all = m.all[:len(m.all)-1]
	delete(m.view, e.key)
}

// Request decides n units of key at now. When the view cannot decide, it
// returns the decision Call to make; the caller runs it (Exec) and hands
// the outcome to Complete, which returns the Decision. n must lie in
// 1..Limit.Max: Request panics with an error wrapping core.ErrBadWeight
// otherwise, before touching the view (a caller's bug: Limiter.AllowN
// refuses such a weight with that error; a negative one spent here would
// add to a grant's balance units Redis never granted).
func (m *Machine) Request(now int64, key string, n int64) (Decision, *Call) {
	if err := m.cfg.Limit.CheckWeight(n); err != nil {
		panic(fmt.Errorf("budget: Machine.Request of %d units (limit %d): %w", n, m.cfg.Limit.Max, err))
	}
	return m.request(now, key, n)
}

// request is Request for a weight already checked (Limiter.AllowN refuses
// a bad one with an error before it takes the lock).
func (m *Machine) request(now int64, key string, n int64) (Decision, *Call) {
	e := m.view[key]
	if e != nil {
		e.demand += n
		m.mark(e)
	}
	return m.decide(now, key, e, n, nil)
}

// Complete applies the outcome of decision Call c at now (the reply's
// arrival) and returns the request's Decision: Redis' verdict (a denial
// that what this PoP holds by now covers, a grant another reply brought
// or the free slot of the window the reply landed in, is admitted from
// it: payHereLate), or, when err is not nil, a verdict on the view as it
// is now (see decide), but for a *RedirectError (a configuration error)
// or a *CanceledError (the request's caller left before Redis answered):
// then the zero Decision, denied, nothing decided on the view and Redis
// not counted down. A Call completed again changes nothing and returns
// its first Decision.
//
// A Call whose caller left keeps every invariant a failed one keeps. Its
// report (this PoP's spends and slots given up, which other requests were
// admitted against) goes to Redis again under its number, applied at
// most once whether or not Redis ran the original. What Request took for
// the request is handed back as for a denial (settle): its grant units
// return to the balance while their grant lives (no op reports them
// spent), and its free slot, if it took one, is given up with no units
// (an op of 0 units claims it), so Redis decides those units again: the
// identity's quota loses nothing, this PoP asks Redis for what the slot
// would have covered. Nothing is counted on the view (no op, no own
// count) for a request nobody served, and its units leave the demand the
// next Sync sizes a grant by. When the Call was never sent, that
// is all: nothing of the request stays counted. When Redis ran it, Redis
// may have counted the units it decided (and granted a top-up this PoP
// never hears of, which expires with its window): they stay counted, a
// cost to the identity's quota and never to the limit, since handing back
// units Redis may not have counted would free budget that is not free.
func (m *Machine) Complete(now int64, c *Call, r *Result, err error) Decision {
	return m.complete(now, c, r, err, true)
}

// complete is Complete; a failed call puts the Machine down only when
// failed says the failure is Redis' (not a deadline that passed before
// the call went out).
func (m *Machine) complete(now int64, c *Call, r *Result, err error, failed bool) Decision {
	if !c.req.done {
		c.req.decided = m.completeOnce(now, c, r, err, failed)
		c.req.done = true
	}
	d := c.req.decided
	d.Parked = c.req.parked // the denial until Finish resolves it (park.go)
	return d
}

func (m *Machine) completeOnce(now int64, c *Call, r *Result, err error, failed bool) Decision {
	c.req.e.asking--
	if c.guard != "" {
		// Redis may have applied the report when no reply came: it is
		// sent again under the same number, applied at most once
		m.reports.done(c, err != nil || r == nil)
	}
	if err != nil || r == nil {
		// a configuration error (redirect.go) or a caller that left
		// (canceled.go): no outage, and no decision on the view
		refused := misrouted(err) || left(err)
		m.down = m.down || (failed && !refused)
		m.settle(c, false) // what the request took goes back (settle)
		if left(err) {
			c.req.e.demand = max(0, c.req.e.demand-c.req.n) // no grant for demand that left
		}
		if refused {
			return Decision{} // nothing decided on the view: denied
		}
		return m.decideNoCall(now, c.req.e, c.req.n)
	}
	sent := m.sentAt(c.Now) // the PoP's clock, not a stamp ahead of it (anchor.go)
	m.heardBack(now - c.Now)
	m.recovered(m.arrivedAt(sent, now, c, r))
	m.acknowledged(c, r)
	e, it := c.req.e, r.Items[0]
	// claims past Redis' window + 2 go again (unapplied.go)
	m.unapplied(e, c.Items[0].Claims, r)
	m.absorb(e, sent, r, it)
	// A retried Call (the original ran, its reply was lost) decided
	// nothing this PoP can see: denied.
	d := Decision{Allowed: it.Allowed == 1, Source: SrcRedis}
	m.settle(c, d.Allowed)
	e.retryAt = 0
	if d.Allowed {
		m.countOwn(e, r.Now, c.req.n) // in the window Redis counted it in, not the reply's arrival's
	} else if s, ok := m.payHereLate(now, e, c.req.n); ok {
		d.Allowed, d.Source = true, s
		m.countOwn(e, now, c.req.n)
		m.stats.PaidLate++
	} else {
		if it.Retry > 0 {
			e.retryAt = sent + it.Retry
		}
		if m.cfg.PoPs == 1 && m.grantInFlight(e) {
			if b := m.grantOut(e); b != nil {
				m.park(c, b, now) // the grant its batch in flight asked may pay it (park.go)
			}
			// Redis may have denied it for units it granted this PoP's
			// Sync batch, whose reply is still out (replies of two
			// connections land in either order): a lone PoP, exact to
			// the unit, starts no known-full wait, so the next request
			// asks Redis and its reply finds the grant (payHereLate), or,
			// once the grant is here, it pays. (With more PoPs the grant
			// pays the first request after it lands; sending every
			// request of the gap to Redis instead cost pop-sim's pinned
			// 1.2 points of round trips saved, 77.6 → 76.3%, even when
			// done only for identities this PoP alone serves.)
			e.fullUntil = 0
		}
	}
	m.stats.Decisions[d.Source]++
	return d
}

// decideNoCall is decide for a request that may not ask Redis again.
func (m *Machine) decideNoCall(now int64, e *entry, n int64) Decision {
	d, c := m.decide(now, e.key, e, n, errNoCall{})
	if c != nil {
		panic("budget: decide planned a call it was told not to")
	}
	return d
}

type errNoCall struct{}

// giveUpAhead is how many windows past its own an item about a contested
// or hot identity, or a decision Call about an identity new here (not yet
// settled), gives this PoP's free slots up
// (claims), so Redis reserves nothing for them. Two rather than one: the
// slots of window x+2 are read by every check of x (E2) and, once x+1
// starts, reserved by E1 until each PoP's next item gives them up; a PoP
// waiting out a known-full wait sends none for seconds, so at each
// window's start the slots of every PoP serving an attacker (32 units at
// 32 PoPs) were reserved, then freed together, and Redis admitted them
// in a lump that the exact log counts past the limit (spread-attack at 32
// PoPs, seed 1: 1.11× the limit against pure Redis' 1.06×; giving up x+2
// too: 1.08, within +0.02 of pure Redis on 9 seeds of 10 and +0.03 on
// the tenth, at 0.2–2.2 points fewer round trips saved, docs/budget.md).
// A contested
// identity's free credit is a unit per PoP per window: what it loses is
// a round trip now and then.
const giveUpAhead = 2

// decide is the Machine's one decision function: for an identity without a
// full entry (e nil), the light tier's free credit (freeLight), else it is
// made full (promoted) and goes on; cached deny-until → grant balance →
// free credit → Redis down (or noCall): fallback on the view →
// known full (Redis' last reply left no headroom: denied here for the
// wait absorb set), contested and heavy under Config.NoWait, or flooding
// with a decision Call about it already in flight (flood.go) → a
// decision Call to Redis. A request the budget cannot cover goes to Redis
// rather than being denied on a guess: a local denial without Redis' word
// is where a client near its limit loses quota (docs/budget.md,
// "Candidates tried").
func (m *Machine) decide(now int64, key string, e *entry, n int64, noCall any) (Decision, *Call) {
	if e == nil {
		if m.freeLight(now, key, n) {
			m.stats.Decisions[SrcFree]++
			return Decision{Allowed: true, Source: SrcFree}, nil
		}
		e = m.entry(key)
		e.demand += n
		m.mark(e)
	}
	x := m.window(now)
	if e.born == math.MinInt64 {
		e.born = now
	}
	verdict := func(ok bool, s Source) (Decision, *Call) {
		m.stats.Decisions[s]++
		if ok {
			m.countOwn(e, now, n)
		}
		return Decision{Allowed: ok, Source: s}, nil
	}
	if now < e.denyUntil {
		return verdict(false, SrcDenyCache)
	}
	if s, ok := m.payHere(e, x, n); ok {
		return verdict(true, s)
	}
	g := m.group(int(e.bucket))
	if m.down || noCall != nil || (now < m.graceUntil && m.contested(e) && !m.cfg.FailClosed) {
		if m.cfg.FailClosed {
			return verdict(false, SrcFallback)
		}
		ok := m.fallbackAdmits(now, e, n)
		if ok {
			e.addOp(Op{X: x, GW: GWFallback, U: n})
		}
		return verdict(ok, SrcFallback)
	}
	if now < e.fullUntil || (m.cfg.NoWait && m.contested(e) && m.heavy(e, now, x)) || (e.asking > 0 && m.flooding(e)) {
		return verdict(false, SrcFull)
	}
	req := &pending{e: e, n: n, x: x}
	if m.credit(x, g) > 0 && x > e.claimed {
		// this PoP's free slot of x is unused but the request is larger:
		// it pays c of the units, Redis decides the rest (Complete
		// reports the slot used, or gives it up unused on a denial)
		req.slot = m.cfg.FreeCredit
		e.useFree(x)
	}
	// so does the grant balance, held for the request until Redis answers
	// (a lone PoP's last units may sit in both: asking Redis for all n
	// denied a request they cover together)
	req.took = m.takeGrant(e, x, n-req.slot)
	it := Item{Key: e.key, Bucket: int(e.bucket), N: n - req.slot - req.took[0].bal - req.took[1].bal}
	if e.asking == 0 && m.settled(e, now) {
		// one top-up in flight per identity: the replies of a burst's
		// Calls land after it, and a grant each would hold budget where
		// no request comes
		it.Want, it.Floor, it.Divisor = m.topUp(e, x, true), m.grantFloor(e), m.divisor(e)
	}
	c := &Call{Group: g, Now: now, Items: []Item{it}, req: req, hotWin: -1, age: m.ageFor(e)}
	m.announce(c, x)
	if ((m.cfg.FreeCredit > 0 && x+giveUpAhead > e.sentClaims) || len(e.pending()) > 0) && m.reports.room() && !m.ahead(x) {
		// The request asks Redis, and reports with it: for an identity
		// new here (a crowd's are new at every PoP) this PoP gives up its
		// free slots of the next giveUpAhead windows (and claims the slots it
		// consumed), so the units Redis reserved for it are Redis' to
		// decide now; a settled identity keeps them unless contested
		// (claims), so one far from its limit that asked Redis once still
		// finds free credit in its next windows (calm identities waited
		// 12–26% more round trips on pop-sim's lines when every Call gave
		// them up). Its unreported spends go along, so Redis counts
		// them in their window rather than as a grant still to spend (a
		// lone PoP is then exact to the unit; a 100 ms crowd over 8 PoPs
		// was served 88% of its quota when one such Call could be in
		// flight at a time, 95% with any number). A claim or spend
		// applied twice (a retry racing its original) would free budget
		// that is not free, so such Calls are numbered in a sequence of
		// their own, which Redis applies at most once each (reports.go).
		// A Call with nothing to report (a settled identity's slots kept,
		// its spends reported) takes no number: it would hold a place in
		// the window for nothing.
		c.Items[0].Claims, c.Items[0].Ops = m.claims(e, x, !m.settled(e, now)), e.takeOps()
		if len(c.Items[0].Claims) > 0 || len(c.Items[0].Ops) > 0 {
			m.reports.take(c)
		}
	}
	e.asking++
	m.count(c)
	return Decision{}, c
}
