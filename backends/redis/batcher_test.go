package redis

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBatcherCapsPipelines: with exec blocked (Redis slow), 200 concurrent
// calls pile up behind maxInflight pipelines; once exec is released every
// call is answered, no pipeline carries more than maxBatch calls, and never
// more than maxInflight are in flight at once.
func TestBatcherCapsPipelines(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var sizes []int
	inflight, most := 0, 0
	b := &batcher{window: time.Millisecond, maxBatch: 8, timeout: time.Minute, exec: func(cs []*call) {
		mu.Lock()
		sizes = append(sizes, len(cs))
		inflight++
		most = max(most, inflight)
		mu.Unlock()
		<-release
		mu.Lock()
		inflight--
		mu.Unlock()
		for _, c := range cs {
			c.val = c.req.args[0]
			close(c.done)
		}
	}}
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := b.do(context.Background(), request{args: []any{i}})
			if assert.NoError(t, err, "call %d answered %v, %v", i, v, err) {
				assert.Equal(t, i, v, "call %d answered %v, %v", i, v, err)
			}
		}()
	}
	// Let the calls pile up behind the blocked pipelines: every call is
	// either in a pipeline exec holds or queued (bounded by a hang only).
	require.Eventually(t, func() bool {
		mu.Lock()
		sent := 0
		for _, n := range sizes {
			sent += n
		}
		mu.Unlock()
		b.mu.Lock()
		defer b.mu.Unlock()
		return sent+len(b.pending) == 200
	}, 30*time.Second, time.Millisecond, "200 calls never all reached the batcher")
	close(release)
	wg.Wait()
	total := 0
	for _, n := range sizes {
		total += n
		assert.LessOrEqual(t, n, 8, "a pipeline of %d calls, maxBatch 8 (sizes %v)", n, sizes)
	}
	if assert.Equal(t, 200, total, "%d calls sent in %d pipelines, at most %d in flight; want 200, ≤ %d", total, len(sizes), most, maxInflight) {
		assert.LessOrEqual(t, most, int(maxInflight), "%d calls sent in %d pipelines, at most %d in flight; want 200, ≤ %d", total, len(sizes), most, maxInflight)
	}
}
