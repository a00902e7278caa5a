package budget

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/lua"
	"github.com/redis/go-redis/v9"
)

// Op is one line of a report: U units taken from the grant of window GW and
// counted as admitted in window X (X < 0: a return, nothing admitted). GW
// is GWFree for the free credit of window X (the op also claims that
// slot) and GWFallback for units admitted while Redis was down.
type Op struct{ X, GW, U int64 }

// The GW of ops that spend no grant.
const (
	GWFree     = -1
	GWFallback = -2
	GWReset    = -3 // forget C of every window of the identity (Machine.Reset)
)

// Item is one identity's part of a Call: its report (Ops, free-slot Claims),
// a decision of N units at Redis (N > 0) and a grant request of Want units.
// Redis grants Want when its headroom h is at least Divisor × Want, else
// the least of Want and ⌈h / Divisor⌉. Divisor 0 (or 4 × PoPs) is a
// quarter of an equal share, granted only while h is at least Floor (0
// means 1; see Machine.grantFloor); Machine.divisor sets less for a PoP
// that served more of the identity's units, and 1 for one it owns (Want
// up to the whole headroom): such a divisor is granted down to one unit,
// whatever Floor says (the script reads both from one argument). A grant
// never passes h, whatever Floor and Divisor say. Peek > 0 makes the Item
// a peek at that many units (N, Want, Claims and Ops zero): Redis counts
// nothing and says whether a decision of them would be admitted now, and
// when they would fit (ItemResult).
type Item struct {
	Key     string
	Bucket  int
	N       int64
	Want    int64
	Floor   int64
	Divisor int64
	Claims  []int64
	Ops     []Op
	Peek    int64
}

// ItemResult is Redis' answer for one Item: Allowed is -1 when the item
// asked no decision; CW and CPrev are C of Redis' window and of the one
// before (lower bounds of the truth); Headroom is the units a decision or
// grant could still take; Retry, when Headroom is 0, the ms until one
// unit would fit if nothing changed. For a peek (Item.Peek > 0), Allowed
// is 1 when a decision of its units would be admitted now, else 0, and
// PeekWait the ms until they would fit if nothing changed (0 when they
// do).
type ItemResult struct {
	Allowed  int64
	Grant    int64
	CW       int64
	CPrev    int64
	Headroom int64
	Retry    int64
	PeekWait int64
}

// Result is a Call's reply: Redis' now (ms) and window, whether the batch
// was a retry Redis had already applied, the windows this PoP
// incarnation may spend free credit in (its lease: LeasedFrom through
// Leased, -1 both when it has none; see Machine.credit), one ItemResult
// per Item, and (a
// batch's reply only) the group's hot identities the caller's cursor had
// not reached, whose free slots every PoP gives up, with the cursor past
// them (HotCursor: the order of the last one listed, in Redis' window).
type Result struct {
	Now        int64
	Window     int64
	Retried    bool
	HotCursor  int64
	Leased     int64
	LeasedFrom int64
	Items      []ItemResult
	Hot        []HotKey
}

// HotKey names a hot identity: its key and bucket.
type HotKey struct {
	Key    string
	Bucket int
}

// Call is one script call a Machine wants made: a Sync batch of one group
// (Seq > 0), a decision (one Item; Seq > 0 when it carries claims, in a
// sequence of its own), a peek (one Item asking nothing) or a reset (one
// Item whose ops forget the identity's counts). Now is the caller's
// clock (ms) when the call is planned (a batch sent again: when Tick
// sends it again); the executor may send it or read Redis' clock instead,
// and the waits its reply sets count from Now on the caller's clock (from
// the last Tick's time when Now is well past it: anchor.go).
// Build none by hand: Machines plan them.
type Call struct {
	Group int
	Seq   uint64
	Now   int64
	Items []Item

	req            *pending   // the request a decision Call answers
	guard          string     // its sequence's guard: "" (a batch's, 'seq'), "dseq" (decisions' reports) or "rseq" (Resets)
	redo           bool       // a decision's report, or a failed Reset's ops, sent again by Tick (its reply never came)
	hotWin, hotCur int64      // the group's hot cursor when the batch was sent
	announce       int64      // this PoP may spend free credit through this window, once Redis counts it (0: no announcement)
	recorded       int64      // its group's checkedTo when planned: the script records this PoP's checks unless they are (lease.go)
	age            int64      // ms: Redis decides its units as of this long before its now (the request's send by this PoP's estimate; age.go), 0: at its now
	trip           *trip      // the round trip Stats counted it in (nil: not counted; unsent.go)
	reset          *resetting // what a Reset's Call took from the view (reset.go)
	peekN          int64      // the units a peek asks about (PeekN; its Item peeks at those this PoP would ask Redis for)
	parked         []*Call    // a batch's: decision Calls denied while it was out, waiting for its grants (park.go)
}

// Decision reports whether the Call is a decision (one request waits on it).
func (c *Call) Decision() bool { return c.req != nil }

var script = redis.NewScript(mustSource("budget"))

func mustSource(name string) string {
	s, err := lua.Source(name)
	if err != nil {
		panic(err)
	}
	return s
}

// Exec runs call c of a Machine configured by cfg on rdb (EVALSHA, then
// EVAL on NOSCRIPT) at Redis time now (ms; now < 0 reads Redis' clock)
// and parses the reply. A failed or unparsable call returns an error
// wrapping core.ErrUnavailable, except a Redis Cluster node's redirection
// of a client that is not a Redis Cluster client: a *RedirectError
// (matching core.ErrInvalid and ErrNotClusterClient), a configuration
// error, for which Limiter neither decides on the view nor counts Redis
// down.
func Exec(ctx context.Context, rdb redis.Scripter, m *Machine, c *Call, now int64) (*Result, error) {
	keys, args := m.encode(c, now)
	v, err := script.Run(ctx, rdb, keys, args...).Slice()
	if err != nil {
		return nil, storeError(rdb, err)
	}
	return parse(v, c.Items, m.cfg.Buckets)
}

// ExecAll runs calls of Machine m (a Tick's batches) in one pipeline at
// Redis time now (ms): ExecJobs with one Job per call.
func ExecAll(ctx context.Context, rdb redis.UniversalClient, m *Machine, calls []*Call, now int64) ([]*Result, []error) {
	jobs := make([]Job, len(calls))
	for i, c := range calls {
		jobs[i] = Job{M: m, C: c, Now: now}
	}
	return ExecJobs(ctx, rdb, jobs)
}

// Job is Call C of Machine M, to run at Redis time Now (ms; < 0 reads
// Redis' clock).
type Job struct {
	M   *Machine
	C   *Call
	Now int64
}

// ExecJobs runs jobs in one pipeline, in order, EVALSHA first and EVAL,
// in order, for those refused with NOSCRIPT (none of which ran), and
// returns each job's Result or error (wrapping core.ErrUnavailable, or a
// *RedirectError as Exec's), by index. On a Cluster, go-redis splits the
// pipeline by node.
func ExecJobs(ctx context.Context, rdb redis.UniversalClient, jobs []Job) ([]*Result, []error) {
	res, errs := make([]*Result, len(jobs)), make([]error, len(jobs))
	cmds := make([]*redis.Cmd, len(jobs))
	pipe := rdb.Pipeline()
	for i, j := range jobs {
		keys, args := j.M.encode(j.C, j.Now)
		cmds[i] = script.EvalSha(ctx, pipe, keys, args...)
	}
	_, _ = pipe.Exec(ctx)
	for i, cmd := range cmds {
		if err := cmd.Err(); err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
			keys, args := jobs[i].M.encode(jobs[i].C, jobs[i].Now)
			cmd = script.Eval(ctx, rdb, keys, args...)
		}
		v, err := cmd.Slice()
		if err != nil {
			errs[i] = storeError(rdb, err)
			continue
		}
		res[i], errs[i] = parse(v, jobs[i].C.Items, jobs[i].M.cfg.Buckets)
	}
	return res, errs
}

// parse reads a script reply for a call of items from a Machine of
// buckets buckets. A reply of the wrong shape (a value of the wrong type,
// a hot identity not spelled bucket|key) returns a *core.UnavailableError.
// A hot identity whose bucket is not one of the Machine's (a hot-list
// member corrupted, or written by something else: it would index past
// the Machine's groups) is left out: the hot list only asks PoPs to give
// slots up, and refusing the reply would put every PoP reading it down
// until the list expires.
func parse(v []any, items []Item, buckets int) (*Result, error) {
	bad := func(what string) error {
		return &core.UnavailableError{Op: "budget script", Err: fmt.Errorf("reply of %d values for %d items: %s", len(v), len(items), what)}
	}
	n := 6 + 6*len(items)
	if len(v) < n {
		return nil, bad("too short")
	}
	ints := make([]int64, n)
	for i := range ints {
		x, ok := v[i].(int64)
		if !ok {
			return nil, bad(fmt.Sprintf("value %d is %T, not an integer", i, v[i]))
		}
		ints[i] = x
	}
	r := &Result{Now: ints[0], Window: ints[1], Retried: ints[2] == 1, HotCursor: ints[3], Leased: ints[4], LeasedFrom: ints[5], Items: make([]ItemResult, len(items))}
	for i := range r.Items {
		o := ints[6+6*i:]
		r.Items[i] = ItemResult{Allowed: o[0], Grant: o[1], CW: o[2], CPrev: o[3], Headroom: o[4], Retry: o[5]}
		if items[i].Peek > 0 {
			// a peek is granted nothing: the script puts its wait there
			r.Items[i].Grant, r.Items[i].PeekWait = 0, o[1]
		}
	}
	for _, h := range v[n:] {
		s, ok := h.(string)
		b, key, cut := strings.Cut(s, "|")
		bucket, err := strconv.Atoi(b)
		if !ok || !cut || err != nil {
			return nil, bad(fmt.Sprintf("hot identity %v is not bucket|key", h))
		}
		if bucket < 0 || bucket >= buckets {
			continue
		}
		r.Hot = append(r.Hot, HotKey{Key: key, Bucket: bucket})
	}
	return r, nil
}

// encode builds c's KEYS and ARGV (see lua/budget.lua).
func (m *Machine) encode(c *Call, now int64) ([]string, []any) {
	cfg := &m.cfg
	tag := m.tag(c.Group)
	guard := c.guard // each kind of guarded Call has its own sequence
	if guard == "" {
		guard = "seq"
	}
	keys := []string{tag + ":" + guard + ":" + strconv.FormatUint(cfg.Incarnation, 16)}
	server := "0"
	if now < 0 {
		server, now = "1", 0
	}
	args := []any{now, server, cfg.Limit.WindowMillis(), cfg.Limit.Max, cfg.PoPs, cfg.FreeCredit,
		cfg.ExpirySlack.Milliseconds(), tag, c.Seq, c.hotWin, c.hotCur, strconv.FormatUint(cfg.Incarnation, 16), c.announce, len(c.Items), c.recorded, c.age}
	for _, it := range c.Items {
		g := max(1, it.Floor) // the equal share's floor
		if it.Divisor > 0 && it.Divisor != 4*int64(cfg.PoPs) {
			g = -it.Divisor // a divisor of its own, granted down to one unit
		}
		n := it.N
		if it.Peek > 0 {
			n = -it.Peek // the script's peek
		}
		args = append(args, it.Key, it.Bucket, n, it.Want, g, len(it.Claims))
		for _, x := range it.Claims {
			args = append(args, x)
		}
		args = append(args, len(it.Ops))
		for _, o := range it.Ops {
			args = append(args, o.X, o.GW, o.U)
		}
	}
	return keys, args
}
