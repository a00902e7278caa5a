package main

import (
	"context"
	"fmt"
	"log"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/core"
	goredis "github.com/redis/go-redis/v9"
)

// callerCounts are the concurrent callers measured.
var callerCounts = []int{1, 8, 64}

// newClient is a pooled client with ContextTimeoutEnabled, as the README
// recommends for a limiter.
func newClient(addr string) *goredis.Client {
	return goredis.NewClient(&goredis.Options{Addr: addr, PoolSize: 128, ContextTimeoutEnabled: true})
}

// measureThroughput warms every identity in both layouts (so decisions
// find state, as at steady traffic), then measures each caller count's
// decisions per second for both layouts in interleaved rounds.
func measureThroughput(ctx context.Context, c *goredis.Client, cfg settings) ([]throughput, error) {
	lim := core.PerWindow(1_000_000_000, time.Hour) // every call admitted: the counting path
	perID, err := redis.New(c, lim, redis.WithBuckets(0))
	if err != nil {
		return nil, err
	}
	bucketed, err := redis.New(c, lim, redis.WithBuckets(cfg.buckets))
	if err != nil {
		return nil, err
	}
	ids := make([]string, cfg.identities)
	for i := range ids {
		ids[i] = fmt.Sprintf("user:%08d", i)
	}
	log.Printf("throughput: warming %d identities in both layouts", len(ids))
	for _, l := range []*redis.Limiter{perID, bucketed} {
		out := make([]core.Decision, 1000)
		for start := 0; start < len(ids); start += 1000 {
			asks := make([]redis.Ask, 0, 1000)
			for _, id := range ids[start:min(len(ids), start+1000)] {
				asks = append(asks, redis.Ask{Key: id, Now: time.Now(), N: 1})
			}
			if err := l.AllowEach(ctx, asks, out); err != nil {
				return nil, err
			}
		}
	}
	var res []throughput
	for _, callers := range callerCounts {
		var a, b, sa, sb, ca, cb, ka, kb, ratios []float64
		for r := 0; r < cfg.rounds; r++ {
			log.Printf("throughput: %d callers, round %d of %d", callers, r+1, cfg.rounds)
			for k := 0; k < 2; k++ {
				i := k ^ (r & 1) // alternate which layout goes first, so drift favours neither
				l := []*redis.Limiter{perID, bucketed}[i]
				sm, err := measureOnce(ctx, c, l, ids, callers, cfg.span)
				if err != nil {
					return nil, err
				}
				if i == 0 {
					a, sa, ca, ka = append(a, sm.rate), append(sa, sm.us), append(ca, sm.cpu), append(ka, sm.commands)
				} else {
					b, sb, cb, kb = append(b, sm.rate), append(sb, sm.us), append(cb, sm.cpu), append(kb, sm.commands)
				}
			}
			ratios = append(ratios, b[len(b)-1]/a[len(a)-1])
		}
		t := throughput{Callers: callers, PerIdentity: median(a), Bucketed: median(b),
			ScriptUsPerID: median(sa), ScriptUsBuckets: median(sb), CPUUsPerID: median(ca), CPUUsBuckets: median(cb),
			CommandsPerID: median(ka), CommandsBuckets: median(kb)}
		t.Ratio = median(ratios)
		res = append(res, t)
	}
	return res, nil
}

// sample is one measurement of one layout.
type sample struct {
	rate     float64 // decisions per second
	us       float64 // Redis' µs per EVALSHA (wall time inside the call)
	cpu      float64 // Redis' CPU µs (user + sys) per decision
	commands float64 // commands the script ran per decision
}

// measureOnce runs callers goroutines deciding on ids in turn for span.
// Redis' CPU time and command counts are read around it: unlike the
// decisions per second and the µs per call, they barely move with the
// machine's load (the CPU time counts only while Redis runs, the commands
// not at all).
func measureOnce(ctx context.Context, c *goredis.Client, l *redis.Limiter, ids []string, callers int, span time.Duration) (sample, error) {
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		return sample{}, err
	}
	cpu0, err := redisCPU(ctx, c)
	if err != nil {
		return sample{}, err
	}
	var next, done atomic.Int64
	var firstErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for g := 0; g < callers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := next.Add(7919) % int64(len(ids)) // a stride prime to the count: every identity in turn, scattered
				if _, err := l.Allow(ctx, ids[i]); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				done.Add(1)
			}
		}()
	}
	time.Sleep(span)
	close(stop)
	wg.Wait()
	elapsed := time.Since(start)
	if err, ok := firstErr.Load().(error); ok {
		return sample{}, err
	}
	cpu1, err := redisCPU(ctx, c)
	if err != nil {
		return sample{}, err
	}
	stats, err := commandStats(ctx, c)
	if err != nil {
		return sample{}, err
	}
	ev := stats["evalsha"]
	if ev.calls == 0 {
		return sample{}, fmt.Errorf("no EVALSHA counted")
	}
	var inner float64
	for name, st := range stats {
		if name != "evalsha" && name != "config|resetstat" && name != "info" {
			inner += st.calls
		}
	}
	n := float64(done.Load())
	return sample{rate: n / elapsed.Seconds(), us: ev.usecPerCall, cpu: (cpu1 - cpu0) * 1e6 / n,
		commands: inner / ev.calls}, nil
}

// cmdStat is one command's line of INFO commandstats.
type cmdStat struct{ calls, usecPerCall float64 }

// commandStats parses INFO commandstats.
func commandStats(ctx context.Context, c *goredis.Client) (map[string]cmdStat, error) {
	info, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	out := map[string]cmdStat{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd {
			continue
		}
		var st cmdStat
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			switch k {
			case "calls":
				st.calls = f
			case "usec_per_call":
				st.usecPerCall = f
			}
		}
		out[name] = st
	}
	return out, nil
}

// redisCPU is Redis' used_cpu_user + used_cpu_sys, in seconds.
func redisCPU(ctx context.Context, c *goredis.Client) (float64, error) {
	info, err := c.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, err
	}
	var sum float64
	var seen int
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_user" || k == "used_cpu_sys") {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, err
			}
			sum += f
			seen++
		}
	}
	if seen != 2 {
		return 0, fmt.Errorf("no used_cpu_user/used_cpu_sys in INFO cpu")
	}
	return sum, nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
