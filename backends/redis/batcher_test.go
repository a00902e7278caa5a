package redis

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
				assert.False(t, v != i, "call %d answered %v, %v", i, v, err)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond) // let the calls pile up behind the blocked pipelines
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
