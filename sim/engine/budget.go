package engine

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/sim/netmodel"
	"github.com/edgelimit/edgelimit/sync/budget"
	"github.com/edgelimit/edgelimit/sync/gossip"
	goredis "github.com/redis/go-redis/v9"
)

// The budget mode (sync/budget) runs on the honest network only, and with
// -mode all there, beside budget-gossip, the same with gossip over the
// real NATS (a Limiter's UseNATS: opt-in, as it saves a tenth to half a
// point of round trips, docs/budget.md, "Gossip"); budget-nowait, with
// budget.Config.NoWait (latency first), and budget-nowait-gossip, the
// same with gossip, are asked for by name.
func init() {
	for name, o := range map[string]budgetOptions{"budget": {}, "budget-nowait": {noWait: true}, "budget-gossip": {gossip: true},
		"budget-nowait-gossip": {noWait: true, gossip: true}} {
		runners[name] = nil
		honestRunners[name] = func(ctx context.Context, e *Env) (*outcome, error) { return runBudgetHonest(ctx, e, o) }
	}
	HonestModes = append(HonestModes, "budget", "budget-gossip")
	Experimental = append(Experimental, "budget-nowait", "budget-nowait-gossip")
}

// budgetOptions are what the budget modes vary.
type budgetOptions struct {
	noWait bool // budget.Config.NoWait
	gossip bool // gossip over NATS (a Limiter's UseNATS)
}

// budgetSim is one run of the budget mode on the honest network: one
// budget.Machine per PoP driven on the engine's agenda. A request the
// Machine decides is answered at once; its decision Call, and a Tick's
// batches, reach Redis one drawn one-way delay later, run there at that
// instant (Redis' clock is true time) in arrival order, and their replies
// land one drawn delay after. Faults refuse (outage), lose (partition, at
// the call timeout), crash (a new incarnation, empty) or empty Redis (a
// loss of its state: lose).
type budgetSim struct {
	e      *Env
	ctx    context.Context
	rdb    goredis.UniversalClient
	ms     []*budget.Machine
	dead   []*budget.Machine
	gen    []int
	links  *netmodel.Links
	faults netmodel.Faults
	agenda agenda
	out    *outcome
	noWait bool          // budget.Config.NoWait
	nats   *budgetGossip // nil: no gossip

	// Calls that reached Redis and wait to run there in one pipeline (see
	// arrive): their reply events (at: when the reply lands), their
	// arrivals, and the instant before which the pipeline must run.
	pipe     []event
	arrivals []time.Duration
	pipeEnd  time.Duration
	minDelay time.Duration // the shortest one-way delay to or from Redis

	// As budget.Limiter's Sync loop: per PoP, the Calls of its Sync still
	// waiting for their reply (the next Sync starts only once they are
	// in, and its gossip is published then), and whether a tick came
	// meanwhile (a time.Ticker keeps one: that Sync runs when this one
	// ends).
	syncOut  []int
	tickOwed []bool

	// As budget.Limiter's AllowN: per PoP, the requests whose denial the
	// Machine parked for a grant its Sync batch in flight asked
	// (budget.Decision.Parked), by decision Call; Finish of that batch
	// decides them.
	parked []map[*budget.Call]int
}

// maxBudgetPipeline bounds the Calls run in one pipeline.
const maxBudgetPipeline = 512

// budgetOneCallAtATime runs each Call alone at its arrival (a test's
// reference for the pipelined runs).
var budgetOneCallAtATime bool

// budgetFlight is a Call on the network: the Machine that made it, and
// Redis' reply once it ran.
type budgetFlight struct {
	m   *budget.Machine
	c   *budget.Call
	res *budget.Result
	err error
}

func runBudgetHonest(ctx context.Context, e *Env, o budgetOptions) (*outcome, error) {
	client, _ := e.countedClient(4)
	defer client.Close()
	s := &budgetSim{e: e, ctx: ctx, rdb: client, out: newOutcome(len(e.Trace.Requests)), noWait: o.noWait,
		links: netmodel.NewLinks(e.Net, e.Jitter, e.Trace.Config.Seed), faults: e.Faults}
	s.out.source = make([]string, len(e.Trace.Requests))
	pops := e.Trace.Config.PoPs
	s.gen = make([]int, pops)
	s.syncOut, s.tickOwed = make([]int, pops), make([]bool, pops)
	s.parked = make([]map[*budget.Call]int, pops)
	for p := range pops {
		s.parked[p] = map[*budget.Call]int{}
	}
	s.minDelay = 1<<63 - 1
	for _, rtt := range e.Net.RedisRTT {
		s.minDelay = min(s.minDelay, rtt/2) // Up draws rtt/2, Down rtt − rtt/2, each plus a jitter ≥ 0
	}
	if budgetOneCallAtATime {
		s.minDelay = 0
	}
	for p := range pops {
		m, err := s.machine(p)
		if err != nil {
			return nil, err
		}
		s.ms = append(s.ms, m)
		s.agenda.add(event{at: e.SyncInterval * time.Duration(p) / time.Duration(pops), kind: evTick, pop: p})
	}
	if o.gossip {
		g, err := openBudgetGossip(e, s.ms)
		if err != nil {
			return nil, err
		}
		defer g.close()
		s.nats = g
	}
	for _, c := range e.Faults.Crashes {
		s.agenda.add(event{at: c.At, kind: evCrash, pop: c.PoP})
	}
	if l := e.Faults.RedisLoss; l > 0 {
		s.agenda.add(event{at: l, kind: evRedisLoss})
	}
	for i, r := range e.Trace.Requests {
		if err := s.runUntil(r.At); err != nil {
			return nil, err
		}
		s.request(i)
		e.progress(i + 1)
	}
	if err := s.runUntil(1<<62 - 1); err != nil {
		return nil, err
	}
	s.out.budget = budgetStats(append(append([]*budget.Machine(nil), s.dead...), s.ms...), len(e.Trace.Requests), e.Trace.Config.PoPs)
	s.out.roundTrips = int64(s.out.budget.RoundTrips)
	s.out.view = s.releaseMachines()
	return s.out, nil
}

// machine builds PoP p's Machine, configured as budget.New configures a
// Limiter on s's client (budget.ForClient: a new random incarnation, and
// 16 groups on a Redis Cluster).
func (s *budgetSim) machine(p int) (*budget.Machine, error) {
	e := s.e
	var rtt time.Duration
	for _, r := range e.Net.RedisRTT {
		rtt += r
	}
	cfg, err := budget.ForClient(budget.Config{PoP: fmt.Sprintf("pop%d", p),
		Limit: e.Limit, PoPs: cmp.Or(e.BudgetPoPs, e.Trace.Config.PoPs), Namespace: e.Namespace, Buckets: e.budgetBuckets(),
		FreeCredit: e.FreeCredit, NoWait: s.noWait, SyncInterval: e.SyncInterval, RTT: rtt / time.Duration(max(1, len(e.Net.RedisRTT))), ExpirySlack: e.expirySlack()}, s.rdb)
	if err != nil {
		return nil, fmt.Errorf("budget machine of pop %d: %w", p, err)
	}
	m, err := budget.NewMachine(cfg)
	if err != nil {
		return nil, fmt.Errorf("budget machine of pop %d: %w", p, err)
	}
	return m, nil
}

// ms is PoP p's clock at offset t of the trace, ms since the epoch.
func (s *budgetSim) clock(p int, t time.Duration) int64 { return s.e.Clock(p, t).UnixMilli() }

func (s *budgetSim) runUntil(t time.Duration) error {
	for {
		if len(s.pipe) > 0 {
			if at, ok := s.agenda.first(); !ok || at >= s.pipeEnd || len(s.pipe) >= maxBudgetPipeline {
				if err := s.flush(); err != nil {
					return err
				}
			}
		}
		ev, ok := s.agenda.next(t)
		if !ok {
			return nil
		}
		switch ev.kind {
		case evDelivery:
			s.ms[ev.pop].Hear(s.clock(ev.pop, ev.at), ev.msg.(gossip.Message))
		case evArrive:
			s.arrive(ev)
		case evReply:
			if err := s.reply(ev); err != nil {
				return err
			}
		case evCrash:
			m, err := s.machine(ev.pop)
			if err != nil {
				return err
			}
			s.crash(ev)
			s.dead = append(s.dead, s.ms[ev.pop])
			s.ms[ev.pop] = m
			s.gen[ev.pop]++
			s.syncOut[ev.pop], s.tickOwed[ev.pop] = 0, false
		case evRedisLoss:
			if err := s.lose(); err != nil {
				return err
			}
		case evTick:
			if s.syncOut[ev.pop] > 0 {
				s.tickOwed[ev.pop] = true
			} else if err := s.sync(ev.pop, ev.at); err != nil {
				return err
			}
			if next := ev.at + s.e.SyncInterval; next < s.e.Trace.Duration {
				s.agenda.add(event{at: next, kind: evTick, pop: ev.pop})
			}
		}
	}
}

// lose is Redis losing its state (Faults.RedisLoss): the Calls that
// reached it before run first, then every key and loaded script goes
// (FLUSHALL, SCRIPT FLUSH), so the next Call runs as EVAL on an empty
// Redis. The Machines keep what they hold.
func (s *budgetSim) lose() error {
	if len(s.pipe) > 0 {
		if err := s.flush(); err != nil {
			return err
		}
	}
	if err := s.rdb.FlushAll(s.ctx).Err(); err != nil {
		return fmt.Errorf("redis loss: %w", err)
	}
	if err := s.rdb.ScriptFlush(s.ctx).Err(); err != nil {
		return fmt.Errorf("redis loss: %w", err)
	}
	return nil
}

// sync runs PoP p's Sync at at, as budget.Limiter.Sync does: its Tick's
// Calls go out, and its gossip is published once their replies are in
// (at once when it sends none).
func (s *budgetSim) sync(p int, at time.Duration) error {
	calls := s.ms[p].Tick(s.clock(p, at))
	for _, c := range calls {
		s.send(p, c, at, -1)
	}
	if s.syncOut[p] = len(calls); len(calls) == 0 {
		return s.gossip(p, at)
	}
	return nil
}

// synced is PoP p's Sync ending at at (its last reply in): its gossip,
// then the Sync a tick asked for meanwhile.
func (s *budgetSim) synced(p int, at time.Duration) error {
	if err := s.gossip(p, at); err != nil {
		return err
	}
	if s.tickOwed[p] {
		s.tickOwed[p] = false
		return s.sync(p, at)
	}
	return nil
}

// request decides request i at its PoP, or sends its decision Call.
func (s *budgetSim) request(i int) {
	r := s.e.Trace.Requests[i]
	p := int(r.PoP)
	now := s.clock(p, r.At)
	s.ms[p].Clock(now) // as Limiter tells its Machine its clock before each request
	d, c := s.ms[p].Request(now, s.e.Key(r.ID), int64(r.N))
	if c == nil {
		s.out.allowed[i], s.out.source[i] = d.Allowed, d.Source.String()
		return
	}
	s.send(p, c, r.At, i)
}

// send puts PoP p's call c on the network at at: lost at once when p is
// partitioned (it fails at the call timeout), else it reaches Redis one
// drawn delay later. req is the request it decides, or -1 for a batch.
func (s *budgetSim) send(p int, c *budget.Call, at time.Duration, req int) {
	f := &budgetFlight{m: s.ms[p], c: c}
	ev := event{kind: evArrive, pop: p, gen: s.gen[p], sent: at, req: req, msg: f}
	if req >= 0 {
		s.out.waited[req] = true
	}
	if s.faults.Cut(p, at) {
		f.err = errLost
		ev.kind, ev.at, ev.lost = evReply, at+callTimeout, true
		s.agenda.add(ev)
		return
	}
	ev.at = at + s.links.Up(p)
	s.agenda.add(ev)
}

// arrive takes a call at its arrival at Redis: refused in an outage (its
// reply sent back at once), else queued to run in the pipeline (flush)
// with its reply's landing drawn now. Every Call arriving within the
// shortest one-way delay after the pipeline's first runs in it, in
// arrival order, before any event at or after that instant: a Call made
// after the first arrival arrives after that instant, and no reply of a
// queued Call lands before it, so Redis ends as it would running each at
// its arrival, and no Machine sees a reply sooner (the simulator runs
// faster: one round trip to the real Redis per pipeline, not per Call).
func (s *budgetSim) arrive(ev event) {
	f := ev.msg.(*budgetFlight)
	arrived := ev.at
	ev.kind, ev.at = evReply, ev.at+s.links.Down(ev.pop)
	if s.faults.RedisOutage.Has(arrived) {
		f.err = errRefused
		s.landed(ev)
		return
	}
	if len(s.pipe) == 0 {
		s.pipeEnd = arrived + s.minDelay
	}
	s.pipe, s.arrivals = append(s.pipe, ev), append(s.arrivals, arrived)
}

// flush runs the queued Calls at Redis in one pipeline, each at its
// arrival, and schedules their replies.
func (s *budgetSim) flush() error {
	jobs := make([]budget.Job, len(s.pipe))
	for i, ev := range s.pipe {
		f := ev.msg.(*budgetFlight)
		// Redis' own clock at the Call's arrival (the run's true time), as
		// budget.Limiter runs its calls in production (Redis' TIME)
		jobs[i] = budget.Job{M: f.m, C: f.c, Now: s.e.Start.Add(s.arrivals[i]).UnixMilli()}
	}
	res, errs := budget.ExecJobs(s.ctx, s.rdb, jobs)
	for i, ev := range s.pipe {
		f := ev.msg.(*budgetFlight)
		f.res, f.err = res[i], errs[i]
		if f.err != nil {
			return fmt.Errorf("budget call at redis: %w", f.err)
		}
		s.landed(ev)
	}
	clear(s.pipe) // its flights hold their Machines: the view's measure frees them
	s.pipe, s.arrivals = s.pipe[:0], s.arrivals[:0]
	return nil
}

// landed schedules reply ev; a reply due at a partitioned PoP is lost (at
// the call timeout).
func (s *budgetSim) landed(ev event) {
	f := ev.msg.(*budgetFlight)
	if s.faults.Cut(ev.pop, ev.at) {
		ev.at, f.res, f.err = max(ev.at, ev.sent+callTimeout), nil, errLost
	}
	s.agenda.add(ev)
}

// reply hands a call's outcome to the Machine that made it (a crashed
// incarnation's reply goes nowhere).
func (s *budgetSim) reply(ev event) error {
	f := ev.msg.(*budgetFlight)
	if ev.gen != s.gen[ev.pop] {
		return nil // its process crashed: crash answered its request
	}
	if ev.req < 0 {
		f.m.Clock(s.clock(ev.pop, ev.at)) // the reply's arrival, as Limiter's Sync reads it
		for _, c := range f.m.Finish(f.c, f.res, f.err) {
			// a parked denial decided: its caller had waited until now
			req := s.parked[ev.pop][c]
			delete(s.parked[ev.pop], c)
			s.decided(req, f.m.Complete(0, c, nil, nil), ev.at)
		}
		if s.syncOut[ev.pop]--; s.syncOut[ev.pop] == 0 {
			return s.synced(ev.pop, ev.at)
		}
		return nil
	}
	// completed at the reply's arrival by the PoP's clock, as
	// budget.Limiter does (the request's time plus the call's)
	d := f.m.Complete(s.clock(ev.pop, ev.at), f.c, f.res, f.err)
	if d.Parked {
		s.parked[ev.pop][f.c] = ev.req // the caller waits for the batch's reply
		return nil
	}
	s.decided(ev.req, d, ev.at)
	return nil
}

// decided records request req's decision d, made when its caller heard
// it, at.
func (s *budgetSim) decided(req int, d budget.Decision, at time.Duration) {
	s.out.allowed[req], s.out.source[req] = d.Allowed, d.Source.String()
	s.out.latency[req] = at - s.e.Trace.Requests[req].At
}

// crash kills PoP ev.pop's process at ev.at: the requests it had sent to
// Redis and not yet got the reply of die with it, denied (the client got
// no answer), their latency ending at the crash; their Calls still reach
// Redis and run there.
func (s *budgetSim) crash(ev event) {
	open := func(o *event) {
		if o.pop == ev.pop && o.gen == s.gen[ev.pop] && o.req >= 0 {
			s.out.latency[o.req] = ev.at - s.e.Trace.Requests[o.req].At
			s.out.source[o.req] = "crash"
		}
	}
	s.agenda.each(func(o *event) {
		if o.kind == evArrive || o.kind == evReply {
			open(o)
		}
	})
	for i := range s.pipe {
		open(&s.pipe[i])
	}
	for _, req := range s.parked[ev.pop] {
		s.out.latency[req] = ev.at - s.e.Trace.Requests[req].At
		s.out.source[req] = "crash"
	}
	clear(s.parked[ev.pop])
}

// budgetBuckets is the Machines' budget.Config.Buckets: Env.BudgetBuckets,
// or about 100 identities of the trace each, at least 16 and at most the
// library's default of 1024. Only identities past their free credit keep
// state at Redis (at 1,000,000 identities on mixed, about 32,000 at a
// time), so one bucket per 100 identities of the trace would leave two or
// three fields per hash, each hash's key overhead shared by few; at the
// cap, 1,000,000 identities on mixed leave about 18.
func (e *Env) budgetBuckets() int {
	if e.BudgetBuckets > 0 {
		return e.BudgetBuckets
	}
	return min(1024, max(16, e.Trace.Config.Identities/100))
}
