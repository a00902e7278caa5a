package engine

import (
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sim/netmodel"
	"github.com/edgelimit/edgelimit/sim/traffic"
	"github.com/stretchr/testify/require"
)

// TestBudgetSyncsAsTheLimitersLoop: budget.Limiter's loop runs one Sync at
// a time (Tick, its calls in one pipeline, Finish), on a time.Ticker: a
// Sync that outlasts the interval is followed at once by the next (the
// ticker keeps the tick that came meanwhile). One PoP 250 ms from Redis
// (no jitter), a Sync every 100 ms, an identity over its limit all along,
// so its Syncs send batches: the Limiter sends each as the previous one's
// reply lands, 250 ms apart (a longer gap: Syncs with nothing to send). The batches are read off Redis' MONITOR
// (a batch's ARGV: now, server, window, max, PoPs, credit, slack, tag,
// seq, hot window ≥ 0; now is the batch's arrival at Redis, 125 ms after
// it was sent). Before the simulator ran one Sync at a time, the PoP's
// batches went out 300 ms apart (the first tick after a reply).
func TestBudgetSyncsAsTheLimitersLoop(t *testing.T) {
	rdb, p := redistest.Client(t)
	ctx := context.Background()
	var reqs []traffic.Request
	for at := time.Duration(0); at < 3*time.Second; at += 5 * time.Millisecond {
		reqs = append(reqs, traffic.Request{At: at, PoP: 0, N: 1})
	}
	c := traffic.Config{Scenario: "hand", PoPs: 1, Identities: 1, Requests: len(reqs), Limit: 50, Window: time.Second, Seed: 1}
	net, err := netmodel.WorldWide(1, 250*time.Millisecond, 250*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, 250*time.Millisecond, net.RedisRTT[0])
	e := NewEnv(&traffic.Trace{Config: c, Duration: 3 * time.Second, Requests: reqs}, net)
	e.RedisAddr, e.Namespace, e.Jitter = p.Addr, t.Name(), 0

	host, port, _ := strings.Cut(p.Addr, ":")
	mon := exec.Command("redis-cli", "-h", host, "-p", port, "monitor")
	out := &lockedBuffer{}
	mon.Stdout = out
	require.NoError(t, mon.Start())
	t.Cleanup(func() { _ = mon.Process.Kill(); _ = mon.Wait() })
	require.Eventually(t, func() bool { return strings.HasPrefix(out.String(), "OK") }, time.Minute, 5*time.Millisecond,
		"MONITOR is on (hang guard)")
	_, err = runBudgetHonest(ctx, e, budgetOptions{})
	require.NoError(t, err)
	require.NoError(t, rdb.Echo(ctx, "sync-test-end").Err())
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "sync-test-end") }, time.Minute, 5*time.Millisecond,
		"MONITOR has shown every command of the run (hang guard)")
	var sends []int64 // ms from the start
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.Contains(line, `"evalsha"`) && !strings.Contains(line, `"EVALSHA"`) {
			continue
		}
		f := strings.Split(line, `" "`)
		// "evalsha" sha numkeys key now server window max pops credit slack tag seq hotwin ...
		if len(f) < 14 {
			continue
		}
		now, _ := strconv.ParseInt(f[4], 10, 64)
		hot, _ := strconv.ParseInt(f[13], 10, 64)
		if seq, _ := strconv.ParseInt(f[12], 10, 64); seq > 0 && hot >= 0 && strings.Contains(f[3], ":seq:") {
			sends = append(sends, now-e.Start.UnixMilli())
		}
	}
	require.Greater(t, len(sends), 5, "batches seen: %v", sends)
	for k := 1; k < len(sends); k++ {
		if gap := sends[k] - sends[k-1]; gap < 500 { // (a longer gap: a Sync with nothing to send between)
			require.Equal(t, int64(250), gap, "batch %d sent at %d ms, the one before at %d ms (all: %v)", k, sends[k], sends[k-1], sends)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for one writer (a process' stdout)
// and concurrent readers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
