package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// TestPipelinedCallHonoursCallerDeadline: against a server that accepts
// connections and never answers, a pipelined decision returns when the
// caller's context ends, not after the limiter's own (longer) timeout.
func TestPipelinedCallHonoursCallerDeadline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // hold it open, answer nothing
		}
	}()
	// Without ContextTimeoutEnabled the call is handed to another goroutine
	// so that the caller can leave; with it, a lone call runs in the
	// caller's goroutine and go-redis ends the read at the ctx deadline.
	for _, ctxTimeouts := range []bool{false, true} {
		c := goredis.NewClient(&goredis.Options{Addr: ln.Addr().String(), MaxRetries: -1, DisableIdentity: true,
			ContextTimeoutEnabled: ctxTimeouts})
		defer c.Close()
		l, err := New(c, core.PerWindow(10, time.Minute), WithPipelining(100*time.Microsecond, 16), WithTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err = l.AllowN(ctx, "k", time.Now(), 1)
		took := time.Since(start)
		if !errors.Is(err, core.ErrUnavailable) {
			t.Fatalf("ContextTimeoutEnabled %v: err %v, want ErrUnavailable", ctxTimeouts, err)
		}
		if took > time.Second {
			t.Fatalf("ContextTimeoutEnabled %v: pipelined call took %s with a 50ms caller deadline (limiter timeout 5s)", ctxTimeouts, took)
		}
	}
}

// TestPipelinedCallsBoundedByTimeout: against a server that never answers,
// every pipelined decision of many concurrent callers (with no deadline of
// their own) returns ErrUnavailable once the limiter's timeout has passed
// since it arrived, whether it rode in the first pipelines or queued behind
// them: the pipeline carrying a call ends by that call's deadline.
func TestPipelinedCallsBoundedByTimeout(t *testing.T) {
	addr := silentServer(t)
	c := goredis.NewClient(&goredis.Options{Addr: addr, MaxRetries: -1, DisableIdentity: true})
	defer c.Close()
	const timeout = 150 * time.Millisecond
	l, err := New(c, core.PerWindow(10, time.Minute), WithPipelining(time.Millisecond, 4), WithTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	const callers = 24 // 6 pipelines of 4: most wait behind the 2 in flight
	took := make(chan time.Duration, callers)
	errs := make(chan error, callers)
	for i := 0; i < callers; i++ {
		go func(i int) {
			start := time.Now()
			_, err := l.AllowN(context.Background(), fmt.Sprint("k", i), time.Now(), 1)
			took <- time.Since(start)
			errs <- err
		}(i)
	}
	for i := 0; i < callers; i++ {
		d, err := <-took, <-errs
		if !errors.Is(err, core.ErrUnavailable) {
			t.Fatalf("err %v, want ErrUnavailable", err)
		}
		if d < timeout-10*time.Millisecond || d > timeout+400*time.Millisecond {
			t.Fatalf("a pipelined call returned after %s; the limiter's timeout is %s", d, timeout)
		}
	}
}

// silentServer listens on a loopback port, accepts connections and never
// answers; it stops with the test.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	return ln.Addr().String()
}

// TestExpiredQueuedCallsAreNeverSent: with Redis paused for writes (CLIENT
// PAUSE, so scripts block), 24 callers with a 100ms timeout all get
// ErrUnavailable in time. Only the calls already in the 2 pipelines in
// flight reach Redis when the pause ends; the ones still queued at their
// deadline are dropped unsent, so no decision a caller was told failed is
// counted behind its back, beyond those already on the wire.
func TestExpiredQueuedCallsAreNeverSent(t *testing.T) {
	c, _ := redistest.Client(t)
	const timeout = 100 * time.Millisecond
	l := newLimiter(t, c, core.PerWindow(10, time.Minute), WithPipelining(time.Millisecond, 4), WithTimeout(timeout))
	if _, err := l.AllowN(context.Background(), "warm", time.Now(), 1); err != nil { // loads the script
		t.Fatal(err)
	}
	if err := c.Do(context.Background(), "CLIENT", "PAUSE", 600, "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	const callers = 24
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if _, err := l.AllowN(context.Background(), fmt.Sprint("k", i), time.Now(), 1); errors.Is(err, core.ErrUnavailable) {
				failed.Add(1)
			}
		}(i)
	}
	wg.Wait()
	time.Sleep(800 * time.Millisecond) // the pause ends; what was on the wire runs
	written := dbsize(t, c) - 1        // minus "warm"
	if failed.Load() != callers || written > 2*4 {
		t.Fatalf("%d of %d callers failed; %d of their calls reached Redis, want all failed and at most the 8 in flight", failed.Load(), callers, written)
	}
	t.Logf("%d callers failed; %d of their calls were already on the wire and ran when the pause ended", callers, written)
}
