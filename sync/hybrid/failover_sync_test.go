package hybrid

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	goredis "github.com/redis/go-redis/v9"
)

// syncEvery is how often each syncer Syncs its PoP: pacing, not a bound.
// The syncers run on the wall clock beside a Redis Cluster failing over on
// its own (see roundPause); the tests wait for Syncs that succeeded after
// an event (syncedSince), never for a number of them in a time.
const syncEvery = 20 * time.Millisecond

// syncers Sync every PoP of a test in the background, as Start's loop
// does, counting Syncs and failures; gate (held for reading by each Sync)
// lets a test read Redis with no Sync in flight.
type syncers struct {
	gate    sync.RWMutex
	syncs   atomic.Int64
	errs    atomic.Int64
	okStart []atomic.Int64 // per PoP: wall ns at the start of its last successful Sync
	badMu   sync.Mutex
	bad     error // the first Sync error that is not a *core.UnavailableError
	stop    chan struct{}
	wg      sync.WaitGroup
}

// startSyncers starts one syncer per node, stopped in t.Cleanup (before
// the nodes close).
func startSyncers(t *testing.T, nodes []*Node, clock core.Clock) *syncers {
	s := &syncers{okStart: make([]atomic.Int64, len(nodes)), stop: make(chan struct{})}
	for i, n := range nodes {
		s.wg.Add(1)
		go s.loop(i, n, clock)
	}
	t.Cleanup(func() { close(s.stop); s.wg.Wait() })
	return s
}

func (s *syncers) loop(i int, n *Node, clock core.Clock) {
	defer s.wg.Done()
	for {
		select {
		case <-s.stop:
			return
		case <-time.After(syncEvery):
		}
		s.gate.RLock()
		start := time.Now()
		err := n.Sync(context.Background(), clock.Now())
		s.gate.RUnlock()
		s.syncs.Add(1)
		var ue *core.UnavailableError
		switch {
		case err == nil:
			s.okStart[i].Store(start.UnixNano())
		case errors.As(err, &ue):
			s.errs.Add(1)
		default:
			s.badMu.Lock()
			s.bad = cmp.Or(s.bad, err)
			s.badMu.Unlock()
			s.errs.Add(1)
		}
	}
}

// syncedSince reports whether every PoP finished a successful Sync that
// started after t.
func (s *syncers) syncedSince(t time.Time) bool {
	for i := range s.okStart {
		if s.okStart[i].Load() <= t.UnixNano() {
			return false
		}
	}
	return true
}

// check fails the test if a Sync returned an untyped error.
func (s *syncers) check(t *testing.T) {
	t.Helper()
	s.badMu.Lock()
	defer s.badMu.Unlock()
	if s.bad != nil {
		t.Fatalf("Sync returned an untyped error: %v", s.bad)
	}
}

// errFenced is what a fenced node "answers".
var errFenced = errors.New("test fence: node unreachable")

// fence is a go-redis hook installed on every node client of a cluster
// client: while set to an address, every call to that node fails with
// errFenced, as if the client could not reach it yet.
type fence struct{ addr atomic.Pointer[string] }

func (f *fence) set(addr string) { f.addr.Store(&addr) }
func (f *fence) lift()           { f.addr.Store(nil) }

func (f *fence) blocks(addr string) bool {
	p := f.addr.Load()
	return p != nil && *p == addr
}

func (f *fence) install(c *goredis.Client) { c.AddHook(fenceHook{f, c.Options().Addr}) }

type fenceHook struct {
	f    *fence
	addr string
}

func (h fenceHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h fenceHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if h.f.blocks(h.addr) {
			cmd.SetErr(errFenced)
			return errFenced
		}
		return next(ctx, cmd)
	}
}
func (h fenceHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		if h.f.blocks(h.addr) {
			for _, c := range cmds {
				c.SetErr(errFenced)
			}
			return errFenced
		}
		return next(ctx, cmds)
	}
}
