package budget

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sync/gossip"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestPropertyBudget is the budget invariant over random interleavings on a
// real Redis: several PoP Machines decide random requests of a few
// identities; their Calls reach Redis after random delays (so in random
// order), are lost on the way there or back, or duplicated; PoPs crash and
// restart with a new incarnation. Redis runs each Call at its arrival. An
// exact replay then judges every admission: the sliding estimate of the
// units all PoPs truly admitted (a Redis-decided unit at the instant Redis
// ran its Call, any other at its decision) stays below Max + 1, plus 2c for
// each restart in the last two windows (docs/budget.md's bound). Machines
// run FailClosed: fallback admissions in an outage are a separate bound.
//
// Runs alternate 1 s and 400 ms windows, and a free credit of 1 unit, none,
// and a mix: each PoP draws 1 unit or none and a PoPs of 1 to 4 (Redis
// counts who may spend free credit, lease.go, rather than trusting any
// caller's configuration); 20% of sends are duplicated. A
// Call runs at Redis as the incarnation that sent it, even after that
// PoP crashed (its retry guards are its incarnation's).
//
// Gossip (gossip.go) goes along: each Tick's message reaches every other
// PoP after its own random delay, 10% of copies lost and 20% duplicated.
// Every deny-until a heard message sets is judged against what Redis can
// have counted (every local admission, and every unit Redis admitted,
// reply lost or not): at its start and at its last instant the sliding
// estimate of those units leaves no room for one more (gossipDenyRight),
// so gossip never denies what pure Redis would admit. Mutations this
// catches (three runs each): adding a heard count to this PoP's own
// instead of taking the larger: 3/3; reading a heard count of window x−1
// as window x's: 3/3.
//
// Every decision is also told in core's terms (Describe) and its figures
// checked in range (describeRight): Remaining within [0, Max], ResetAfter
// within [0, 2 windows], RetryAfter on a denial within [1 ms, 3 windows],
// Staleness not negative. Mutation this catches: core.SlidingRetryMillis
// dividing by a zero prev when the view's counts leave room (a denial
// decided elsewhere than the view's counts, by Redis or a fail-closed
// fallback, told a wait near 2⁶³ ms that overflowed into a negative
// RetryAfter, e.g. −124 ms): 3/3.
//
// An admission counts the whole request: the units Redis decided at the
// instant it ran the Call, the units its free slot and grant balance paid
// in the request's window (where the PoP reports them).
//
// Mutations it catches, each checked by hand (three runs of the test each,
// the failing seed printed):
//   - not counting G_{w−1} in the estimate (lua: cur without p1[2]): 3/3;
//   - forgetting R (lua: R returns 0): 3/3;
//   - a grant spendable in its window + 2 (Machine.spendGrant): 3/3;
//   - free credit twice in a window (decide with x >= e.claimed): 3/3.
//
// Mutations it catches only sometimes, each caught 3/3 by the test named:
//   - applying a retried batch again (lua: the seq guard off): 1/3;
//     TestScriptRetriedBatch;
//   - a slot claimed before the op reporting its use (claims not skipping
//     usedFree): 1/3; TestFreeCreditThenRedis and TestContested;
//   - no E1 check (the next window's free credit): 1/3, and not counting
//     G_{w−2} (lua: prev without p2[2]): 0/3; TestScriptEstimateMatchesCore;
//   - claims skipping only the latest used slot, when a calm identity's
//     free op of the window before is still unsent: failed 2-4 of 3,000
//     runs (seeds scanned, about one test in ten); TestClaimsSkipUsedSlots;
//   - reserving free credit by the caller's FreeCredit and PoPs alone
//     (lua: R without the announced spenders), and spending free credit
//     before Redis counted this PoP (credit not gated by the lease): 0/3
//     each, as the mixed runs' PoPs give their slots up soon after an
//     identity is contested; TestPropertyLease (every PoP configured as
//     if alone, identities contested while PoPs hold free slots, PoPs
//     cut off from Redis until their leases lapse): 3/3 each;
//     TestReservationCountsAnnouncedSpenders and
//     TestNoFreeCreditBeforeLease;
//   - claims carried by decision Calls without a sequence number (a
//     duplicated send counts a slot twice): seed 5724715150859359352,
//     400 ms window, failed before decision Calls had their own guard
//     ('dseq'); 0/3 since, as reports then go with few Calls;
//     TestDecisionReportAppliedOnce.
//
// Since slots are given up only by contested identities and a quiet PoP
// keeps the grant its rate expects, the interleavings that expose these
// (a retried return or claim, a G_{w−2} spend unreported at w with the
// estimate tight) are rare in random runs.
func TestPropertyBudget(t *testing.T) {
	before, denies := propSources, propGossipDenies // other tests' runs add to them
	propertyRuns(t, 100, propConfigs, false)
	var sources [nSources]uint64
	for i := range sources {
		sources[i] = propSources[i] - before[i]
	}
	t.Logf("decisions by source: %v", sources)
	for _, src := range []Source{SrcGrant, SrcFree, SrcRedis, SrcFull, SrcFallback} {
		require.Positive(t, sources[src], "the runs decided some requests from %v", src)
	}
	t.Logf("deny-until set by gossip: %d", propGossipDenies-denies)
	require.Positive(t, propGossipDenies-denies, "gossip denied some identities")
}

// propertyRuns plays n runs of propertyRun on a fresh server from a
// random seed (logged), Redis emptied before each, alternating
// propWindows and, after each turn of them, configs; it requires each to
// hold.
func propertyRuns(t *testing.T, n int, configs []propConfig, lose bool) {
	t.Helper()
	rdb, _ := redistest.Client(t)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	for run := range n {
		require.NoError(t, rdb.FlushAll(context.Background()).Err())
		s := uint64(run) + seed
		conf := configs[run/len(propWindows)%len(configs)]
		msg := propertyRun(t, rdb, s, propWindows[run%len(propWindows)], conf, lose)
		require.Empty(t, msg, "seed %d (run %d)", s, run)
	}
}

// propGossipDenies counts the deny-untils heard gossip set or extended
// over every run.
var propGossipDenies uint64

// propWholeGrants counts the grants Redis made to items of divisor 1
// (an owned identity, or under NoWait one this PoP served most of: the
// want up to the whole headroom) larger than the equal share of the
// headroom would have been, over every run; propSplitGrants those to
// items of a divisor from 2 to P (under NoWait, a PoP that served less
// than most of the identity's counted units: P, an equal share, at a
// P-th or less).
var propWholeGrants, propSplitGrants uint64

// propParked counts the parked denials (Decision.Parked) Finish resolved
// over every run.
var propParked uint64

// gossipDeny is a deny-until heard gossip set: key denied from at to until.
type gossipDeny struct {
	key       string
	at, until int64
}

// propWindows are the windows (ms) the runs alternate: with a Sync every
// 100 ms, a 400 ms window leaves more reports in flight across windows.
var propWindows = []int64{1000, 400}

// propConfigs are the PoPs' configurations the runs alternate, after every
// window: a FreeCredit of 1 unit at every PoP; none (-1) at every PoP,
// where every local admission is a grant's; and mixed, each PoP (each
// incarnation) drawing 1 unit or none and a PoPs of 1 to propPoPs, the
// odd PoPs running NoWait, as a deployment's PoPs may be configured while
// a change rolls out.
var propConfigs = []propConfig{propCredit, propNoCredit, propMixed}

type propConfig int

const (
	propCredit propConfig = iota
	propNoCredit
	propMixed
	propAlone // TestPropertyLease's: every PoP configured as if alone (property_lease_test.go)
	propHome  // TestPropertyOwned's: each key's requests from its home PoP, which may move (property_owned_test.go)
)

const (
	propMax  = 20
	propPoPs = 4
)

type propEvent struct {
	at   int64
	seq  int
	kind int // 0 request, 1 tick, 2 arrive, 3 reply, 4 gossip delivered
	pop  int
	gen  int
	key  string
	n    int64
	call *Call
	by   *Machine // the Machine that made call: a crashed PoP's Calls in flight still carry its incarnation
	res  *Result
	err  error
	ran  int64 // Redis' time the call ran at
	send int   // the send this event belongs to (a retried batch is sent again)
	msg  gossip.Message
}

type propQueue []*propEvent

func (q propQueue) Len() int { return len(q) }
func (q propQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q propQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *propQueue) Push(x any)   { *q = append(*q, x.(*propEvent)) }
func (q *propQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// propSources counts the decisions of every run by source, so the test can
// show it exercised each path.
var propSources [nSources]uint64

type admission struct {
	at int64
	n  int64
}

// propertyRun plays one random run and returns "" or what broke. With
// lose, Redis loses every key and every loaded script (FLUSHALL, SCRIPT
// FLUSH: a restart without persistence, as far as the script can tell)
// at a random instant of the run's windows 2 to 5, and the judge allows
// what that forgets (judge).
func propertyRun(t *testing.T, rdb *redis.Client, seed uint64, propWindow int64, conf propConfig, lose bool) string {
	rng := rand.New(rand.NewPCG(seed, 2))
	ctx := context.Background()
	credit := int64(1) // the largest free credit any PoP runs with
	if conf == propNoCredit {
		credit = -1
	}
	newM := func(p int) *Machine {
		credit, pops := credit, propPoPs
		switch conf {
		case propMixed:
			pops = 1 + rng.IntN(propPoPs)
			if rng.IntN(2) == 0 {
				credit = -1
			}
		case propAlone:
			pops = 1
		}
		// under propMixed and propHome the odd PoPs run NoWait (no draw:
		// the random numbers stay those of the runs before it)
		noWait := (conf == propMixed || conf == propHome) && p%2 == 1
		m, err := NewMachine(Config{PoP: fmt.Sprintf("p%d", p), Incarnation: rng.Uint64() | 1,
			Limit: core.PerWindow(propMax, time.Duration(propWindow)*time.Millisecond), PoPs: pops, Buckets: 3, Groups: 2,
			FreeCredit: credit, NoWait: noWait, FailClosed: true, SyncInterval: 100 * time.Millisecond, RTT: 40 * time.Millisecond, ExpirySlack: time.Hour})
		require.NoError(t, err)
		return m
	}
	ms := make([]*Machine, propPoPs)
	gen := make([]int, propPoPs)
	for p := range ms {
		ms[p] = newM(p)
	}
	keys := []string{"a", "b"}[:1+rng.IntN(2)]
	var q propQueue
	seq := 0
	push := func(e *propEvent) { seq++; e.seq = seq; heap.Push(&q, e) }
	start := int64(5000) * propWindow
	horizon := start + 12*propWindow
	// Requests: bursts at random instants, from random PoPs (under
	// propHome, from the key's home at that instant).
	from := func(p int, key string, at int64) int { return p }
	if conf == propHome {
		from = homes(rng, keys, start, horizon)
	}
	for range 60 {
		at := start + rng.Int64N(horizon-start)
		burst := 1 + rng.IntN(15)
		p := rng.IntN(propPoPs)
		key := keys[rng.IntN(len(keys))]
		for i := range burst {
			n := int64(1)
			if rng.IntN(5) == 0 {
				n = 2
			}
			pp := p
			if rng.IntN(3) == 0 {
				pp = rng.IntN(propPoPs)
			}
			when := at + int64(i)*rng.Int64N(30)
			push(&propEvent{at: when, kind: 0, pop: from(pp, key, when), key: key, n: n})
		}
	}
	// Single units just after window starts, from random PoPs: free credit
	// where a window just filled.
	// Pairs of single units from one PoP just before and just after a
	// window's start: the free credit of both windows.
	for range 30 {
		at := start + (1+rng.Int64N(11))*propWindow
		p, key := rng.IntN(propPoPs), keys[rng.IntN(len(keys))]
		t0, t1 := at-1-rng.Int64N(40), at+rng.Int64N(40)
		push(&propEvent{at: t0, kind: 0, pop: from(p, key, t0), key: key, n: 1})
		push(&propEvent{at: t1, kind: 0, pop: from(p, key, t1), key: key, n: 1})
	}
	tickFrom := start
	var lease leaseRun
	if conf == propAlone {
		tickFrom = lease.traffic(rng, push, start, horizon, propWindow)
	}
	for p := range propPoPs {
		push(&propEvent{at: tickFrom + int64(p)*33, kind: 1, pop: p})
	}
	var crashes []int64
	for range rng.IntN(3) {
		crashes = append(crashes, start+rng.Int64N(horizon-start))
	}
	slices.Sort(crashes)
	restarts := slices.Clone(crashes)
	lossAt := int64(-1) // when Redis loses its state (-1: never)
	if lose {
		// its own generator: the run's draws stay those of the same seed without a loss
		lossAt = start + 2*propWindow + rand.New(rand.NewPCG(seed, 7)).Int64N(4*propWindow)
	}
	lost := false
	servedAfter := 0 // replies a Machine applied after the windows the loss relaxes the judge in
	truth := map[string][]admission{}
	counted := map[string][]admission{} // what Redis can have counted: truth and every unit it admitted
	var denies []gossipDeny
	sends := 0
	delay := func() int64 { // one way: mostly short, sometimes most of a window
		if rng.IntN(10) == 0 {
			return 1 + rng.Int64N(1500)
		}
		return 1 + rng.Int64N(60)
	}
	send := func(p int, c *Call, at int64, key string) {
		sends++
		if lease.cut(p, at) { // cut off from Redis: lost on the way
			push(&propEvent{at: at + 300, kind: 3, pop: p, gen: gen[p], call: c, key: key, err: errors.New("lost"), send: sends})
			return
		}
		switch r := rng.IntN(10); {
		case r == 0: // lost on the way: fails at the timeout
			push(&propEvent{at: at + 300, kind: 3, pop: p, gen: gen[p], call: c, key: key, err: errors.New("lost"), send: sends})
		default:
			copies := 1
			if r <= 2 { // duplicated (a retry racing its original)
				copies = 2
			}
			for range copies {
				push(&propEvent{at: at + delay(), kind: 2, pop: p, gen: gen[p], call: c, by: ms[p], key: key, send: sends})
			}
		}
	}
	replied := map[int]bool{}
	parked := map[*Call]string{} // decision Calls Complete parked (Decision.Parked): their keys, until Finish returns them
	for q.Len() > 0 {
		ev := heap.Pop(&q).(*propEvent)
		for len(crashes) > 0 && crashes[0] <= ev.at {
			p := rng.IntN(propPoPs)
			ms[p] = newM(p)
			gen[p]++
			crashes = crashes[1:]
		}
		if lossAt >= 0 && !lost && ev.at >= lossAt {
			lost = true
			if err := rdb.FlushAll(ctx).Err(); err != nil {
				return fmt.Sprintf("FLUSHALL: %v", err)
			}
			if err := rdb.ScriptFlush(ctx).Err(); err != nil {
				return fmt.Sprintf("SCRIPT FLUSH: %v", err)
			}
		}
		m := ms[ev.pop]
		switch ev.kind {
		case 0:
			lease.asked(m, ev.pop, ev.at, ev.key)
			d, c := m.Request(ev.at, ev.key, ev.n)
			if c == nil {
				if msg := describeRight(m.Describe(ev.at, ev.key, ev.n, d), propWindow); msg != "" {
					return fmt.Sprintf("%s at %d, %v of %d units: %s", ev.key, ev.at, d, ev.n, msg)
				}
				if d.Allowed {
					truth[ev.key] = append(truth[ev.key], admission{ev.at, ev.n})
					counted[ev.key] = append(counted[ev.key], admission{ev.at, ev.n})
				}
				continue
			}
			send(ev.pop, c, ev.at, ev.key)
		case 1:
			for _, c := range m.Tick(ev.at) {
				send(ev.pop, c, ev.at, "")
			}
			if ev.at+100 < horizon+5*propWindow {
				push(&propEvent{at: ev.at + 100, kind: 1, pop: ev.pop})
			}
			if msg, ok := m.Gossip(ev.at); ok {
				for p := range propPoPs {
					for range gossipCopies(rng) {
						if p != ev.pop {
							push(&propEvent{at: ev.at + delay(), kind: 4, pop: p, msg: msg})
						}
					}
				}
			}
		case 2:
			res, err := Exec(ctx, rdb, ev.by, ev.call, ev.at)
			if err != nil {
				return fmt.Sprintf("script: %v", err)
			}
			lease.ran(ev.by, ev.call, res)
			// a grant past what the equal share gives: ⌈h/4P⌉ of the
			// headroom h before it (the reply's is after it)
			share := 4 * int64(ev.by.Config().PoPs)
			for i, it := range ev.call.Items {
				if g := res.Items[i].Grant; g > (res.Items[i].Headroom+g+share-1)/share {
					switch {
					case it.Divisor == 1:
						propWholeGrants++
					case it.Divisor > 1:
						propSplitGrants++
					}
				}
			}
			if ev.call.Decision() && res.Items[0].Allowed == 1 {
				counted[ev.key] = append(counted[ev.key], admission{ev.at, ev.call.Items[0].N})
			}
			back := &propEvent{at: ev.at + delay(), kind: 3, pop: ev.pop, gen: ev.gen, call: ev.call, key: ev.key, res: res, ran: ev.at, send: ev.send}
			if rng.IntN(10) == 0 {
				back.res, back.err = nil, errors.New("reply lost")
			}
			push(back)
		case 3:
			if ev.gen != gen[ev.pop] || replied[ev.send] {
				continue // the process that sent it is gone, or a duplicate's reply
			}
			replied[ev.send] = true
			if lost && ev.res != nil && floorDiv(ev.at, propWindow) > floorDiv(lossAt, propWindow)+4 {
				servedAfter++
			}
			if !ev.call.Decision() {
				for _, c := range m.Finish(ev.call, ev.res, ev.err) {
					// a parked denial decided: paid from what this PoP
					// holds at the instant the Machine counts it, or denied
					key := parked[c]
					delete(parked, c)
					propParked++
					at := max(c.req.parkedAt, m.clockAt)
					d := m.Complete(at, c, nil, nil)
					if msg := describeRight(m.Describe(at, key, c.req.n, d), propWindow); msg != "" {
						return fmt.Sprintf("%s at %d, %v of %d units (parked): %s", key, at, d, c.req.n, msg)
					}
					if d.Allowed {
						truth[key] = append(truth[key], admission{at, c.req.n})
						counted[key] = append(counted[key], admission{at, c.req.n})
					}
				}
				continue
			}
			d := m.Complete(ev.at, ev.call, ev.res, ev.err)
			if d.Parked {
				parked[ev.call] = ev.key // its caller waits for the batch's reply
				continue
			}
			if msg := describeRight(m.Describe(ev.at, ev.key, ev.call.req.n, d), propWindow); msg != "" {
				return fmt.Sprintf("%s at %d, %v of %d units: %s", ev.key, ev.at, d, ev.call.req.n, msg)
			}
			if d.Allowed {
				// the whole request: Redis decided Items[0].N of it, at
				// the instant it ran the Call; the free slot and grant
				// balance the request held pay the rest, in the window of
				// the request (the one the PoP reports them in)
				n := ev.call.req.n
				if d.Source != SrcRedis {
					truth[ev.key] = append(truth[ev.key], admission{ev.at, n})
					counted[ev.key] = append(counted[ev.key], admission{ev.at, n})
					continue
				}
				truth[ev.key] = append(truth[ev.key], admission{ev.ran, ev.call.Items[0].N})
				if held := n - ev.call.Items[0].N; held > 0 {
					truth[ev.key] = append(truth[ev.key], admission{ev.call.Now, held})
					counted[ev.key] = append(counted[ev.key], admission{ev.call.Now, held})
				}
			}
		case 4:
			before := map[string]int64{}
			for _, k := range keys {
				if e := m.view[k]; e != nil {
					before[k] = e.denyUntil
				}
			}
			m.Hear(ev.at, ev.msg)
			for k, b := range before {
				if u := m.view[k].denyUntil; u > b {
					denies = append(denies, gossipDeny{key: k, at: ev.at, until: u})
				}
			}
		}
	}
	if lose && servedAfter == 0 {
		return fmt.Sprintf("Redis lost its state at %d: no reply applied after window %d", lossAt, floorDiv(lossAt, propWindow)+4)
	}
	propGossipDenies += uint64(len(denies))
	for _, d := range denies {
		if msg := gossipDenyRight(counted[d.key], d, propWindow); msg != "" {
			return msg
		}
	}
	for _, m := range ms {
		st := m.Stats()
		for i, v := range st.Decisions {
			propSources[i] += v
		}
	}
	for key, adm := range truth {
		if msg := judge(adm, restarts, lossAt, key, propWindow, max(0, credit)); msg != "" {
			return msg
		}
	}
	return ""
}

// describeRight checks the figures of a decision told in core's terms:
// Remaining within [0, propMax], ResetAfter within [0, 2 windows],
// RetryAfter 0 on an admission and within [1 ms, 4 windows] on a denial
// (Redis' word, a deny-until or a full wait: none reaches past window
// w + 3, where Redis' wait may end when the grants of w still weigh in
// w + 2's estimate), Staleness not negative. "" when they are.
func describeRight(d core.Decision, propWindow int64) string {
	w := time.Duration(propWindow) * time.Millisecond
	switch {
	case d.Remaining < 0 || d.Remaining > propMax:
		return fmt.Sprintf("Remaining %d outside [0, %d]", d.Remaining, propMax)
	case d.ResetAfter < 0 || d.ResetAfter > 2*w:
		return fmt.Sprintf("ResetAfter %v outside [0, %v]", d.ResetAfter, 2*w)
	case d.Allowed && d.RetryAfter != 0:
		return fmt.Sprintf("RetryAfter %v on an admission", d.RetryAfter)
	case !d.Allowed && (d.RetryAfter < time.Millisecond || d.RetryAfter > 4*w):
		return fmt.Sprintf("RetryAfter %v on a denial, outside [1ms, %v]", d.RetryAfter, 4*w)
	case d.Staleness < 0:
		return fmt.Sprintf("Staleness %v", d.Staleness)
	}
	return ""
}

// gossipCopies is how many copies of one gossip message reach one PoP:
// 0 (lost) one time in ten, 2 (duplicated) one in five, else 1.
func gossipCopies(rng *rand.Rand) int {
	switch r := rng.IntN(10); {
	case r == 0:
		return 0
	case r <= 2:
		return 2
	}
	return 1
}

// gossipDenyRight returns "" when, at d's first and last instants, the
// sliding estimate of the units admitted before each (counted) leaves no
// room for one more unit: pure Redis denies there too.
func gossipDenyRight(counted []admission, d gossipDeny, propWindow int64) string {
	slices.SortStableFunc(counted, func(a, b admission) int { return int(a.at - b.at) })
	for _, t := range []int64{d.at, d.until - 1} {
		var st core.WindowState
		idx := floorDiv(t, propWindow)
		for _, a := range counted {
			if a.at <= t {
				st.Roll(floorDiv(a.at, propWindow))
				st.Cur += a.n
			}
		}
		st.Roll(idx)
		est := core.SlidingEstimate(st.Cur, st.Prev, t-idx*propWindow, propWindow)
		if core.SlidingAdmits(est, propMax, 1) {
			return fmt.Sprintf("identity %s: gossip denied it from %d to %d, but at %d Redis had counted cur %d prev %d (estimate %.3f) and admits a unit",
				d.key, d.at, d.until, t, st.Cur, st.Prev, est)
		}
	}
	return ""
}

// judge replays admissions in time order and returns "" when at each the
// sliding estimate is below Max + 1 (+ 2c per restart in the two windows
// before it, c the free credit), and, when Redis lost its state at loss
// (>= 0): + Max in the loss's window L and the two after it, what Redis
// forgot having been within the limit (its counts, and the grants of L
// and L − 1 still to be spent, spendable until the window after theirs
// ends, which an estimate of L + 2 weighs); and + 2c·P in L .. L + 4, free
// credit leased before the loss (announced up to L + 3) being reserved
// afterwards only by each caller's own configuration (its c·(P − K), P at
// least 1 here against propPoPs PoPs), at most c·P a window in the two
// windows an estimate weighs. On one clock: a PoP whose clock runs a
// window ahead announces a window further.
func judge(adm []admission, restarts []int64, loss int64, key string, propWindow, c int64) string {
	slices.SortStableFunc(adm, func(a, b admission) int { return int(a.at - b.at) })
	var st core.WindowState
	for _, a := range adm {
		idx := floorDiv(a.at, propWindow)
		st.Roll(idx)
		st.Cur += a.n
		est := core.SlidingEstimate(st.Cur, st.Prev, a.at-idx*propWindow, propWindow)
		allow := float64(propMax + 1)
		if l := floorDiv(loss, propWindow); loss >= 0 && idx >= l {
			if idx <= l+2 {
				allow += propMax
			}
			if idx <= l+4 {
				allow += float64(2 * c * propPoPs)
			}
		}
		for _, r := range restarts {
			if r <= a.at && r > a.at-2*propWindow {
				allow += float64(2 * c)
			}
		}
		if !(est < allow) {
			return fmt.Sprintf("identity %s: estimate %.3f at %d (window %d, cur %d prev %d) not below %.2f", key, est, a.at, idx, st.Cur, st.Prev, allow)
		}
	}
	return ""
}
