package redis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/edgelimit/edgelimit/core"
	goredis "github.com/redis/go-redis/v9"
)

// memBatch is how many commands one pipeline of the measurement carries.
const memBatch = 1000

// MeasureMemoryPerIdentity reports the Redis used_memory grown per identity,
// in bytes, for n identities "user:00000000".. in two layouts holding the
// same sliding-window state (43 units in the previous minute, 57 in this
// one, limit 100 per minute, with TTLs):
//   - ours: one key per identity, "el:{user:00000042}:s:100/1m", written by the
//     sliding script itself;
//   - twoKey: the article's two counter keys, "rl:user:00000042:W" for the
//     window numbers W-1 and W, by INCRBY and PEXPIRE.
//
// Each layout's keys are deleted after it is measured. client must be a
// single node (used_memory is per server) that nothing else writes to
// meanwhile, or the figures are noise. n must be positive.
func MeasureMemoryPerIdentity(ctx context.Context, client goredis.UniversalClient, n int) (ours, twoKey float64, err error) {
	if n <= 0 {
		return 0, 0, fmt.Errorf("%w: n must be positive", core.ErrInvalid)
	}
	l, err := New(client, core.PerWindow(100, time.Minute), WithBuckets(0))
	if err != nil {
		return 0, 0, err
	}
	if err := l.script.Load(ctx, client).Err(); err != nil {
		return 0, 0, err
	}
	now := time.Now().UnixMilli()
	w := int64(60_000)
	ours, err = measureLayout(ctx, client, n, func(p goredis.Pipeliner, id string) []string {
		for _, s := range []struct{ at, n int64 }{{now - w, 43}, {now, 57}} {
			r := l.newRequest(l.Key(id), s.at, s.n, true)
			l.script.EvalSha(ctx, p, r.keys, r.args...)
		}
		return []string{l.Key(id)}
	})
	if err != nil {
		return 0, 0, err
	}
	twoKey, err = measureLayout(ctx, client, n, func(p goredis.Pipeliner, id string) []string {
		keys := []string{twoKeyName(id, now/w-1), twoKeyName(id, now/w)}
		for i, k := range keys {
			p.IncrBy(ctx, k, int64(43+14*i))
			p.PExpire(ctx, k, 2*time.Minute)
		}
		return keys
	})
	return ours, twoKey, err
}

func twoKeyName(id string, window int64) string {
	return "rl:" + id + ":" + strconv.FormatInt(window, 10)
}

// writeFunc queues the commands creating identity id and returns its keys.
type writeFunc func(p goredis.Pipeliner, id string) []string

// measureLayout writes n identities with write, reads the growth of
// used_memory, deletes the keys and waits for the memory to come back.
func measureLayout(ctx context.Context, c goredis.UniversalClient, n int, write writeFunc) (float64, error) {
	before, err := UsedMemory(ctx, c)
	if err != nil {
		return 0, err
	}
	keys := make([]string, 0, 2*n)
	for start := 0; start < n; start += memBatch {
		p := c.Pipeline()
		for i := start; i < min(n, start+memBatch); i++ {
			keys = append(keys, write(p, fmt.Sprintf("user:%08d", i))...)
		}
		if _, err := p.Exec(ctx); err != nil {
			return 0, err
		}
	}
	time.Sleep(300 * time.Millisecond) // let incremental rehashing finish
	after, err := UsedMemory(ctx, c)
	if err != nil {
		return 0, err
	}
	if err := deleteKeys(ctx, c, keys); err != nil {
		return 0, err
	}
	settle(ctx, c, before+(after-before)/100+192<<10)
	return float64(after-before) / float64(n), nil
}

func deleteKeys(ctx context.Context, c goredis.UniversalClient, keys []string) error {
	for start := 0; start < len(keys); start += memBatch {
		p := c.Pipeline()
		for _, k := range keys[start:min(len(keys), start+memBatch)] {
			p.Unlink(ctx, k)
		}
		if _, err := p.Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// settle waits (up to 5 s) until used_memory falls to target, as Redis
// shrinks its emptied hash tables in the background: measuring the next
// layout before that would leave its table growth uncounted.
func settle(ctx context.Context, c goredis.UniversalClient, target int64) {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if m, err := UsedMemory(ctx, c); err != nil || m <= target {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// usedMemory reads used_memory from INFO memory.
func UsedMemory(ctx context.Context, c goredis.UniversalClient) (int64, error) {
	info, err := c.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("no used_memory in INFO memory")
}
