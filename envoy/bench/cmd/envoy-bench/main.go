// Command envoy-bench runs envoyproxy/ratelimit (built from its Go module)
// and edgelimit-ratelimit in Redis mode and in budget mode side by side on
// one redis-server, and measures, at 1, 8 and 64 concurrent gRPC callers,
// decisions per second, p50 and p99 latency, and Redis commands and Redis
// CPU per 1,000 decisions; then it plays the article's table A (limit 100
// per minute: 100 requests in the last second of a minute, 100 one second
// into the next) through each.
//
//	cd envoy/bench && go run ./cmd/envoy-bench            # table on stdout
//	go run ./cmd/envoy-bench -requests 5000 -json
//
// Every server runs as its own process; the load client is this one.
// Progress goes to stderr.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/edgelimit/edgelimit/internal/redisproc"
	"github.com/edgelimit/edgelimit/sim/natsembed"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	goredis "github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

const rules = `domain: bench
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 1000000}
  - key: burst
    rate_limit: {unit: minute, requests_per_unit: 100}
`

// result is one target at one concurrency.
type result struct {
	Target         string  `json:"target"`
	Callers        int     `json:"callers"`
	Decisions      int     `json:"decisions"`
	Errors         int     `json:"errors"`
	PerSecond      float64 `json:"decisions_per_second"`
	P50us          float64 `json:"p50_us"`
	P99us          float64 `json:"p99_us"`
	RedisCmdsPerK  float64 `json:"redis_commands_per_1000"` // as Redis counts them: a script's own commands too
	ScriptsPerK    float64 `json:"redis_script_calls_per_1000"`
	RedisCPUmsPerK float64 `json:"redis_cpu_ms_per_1000"`
}

type target struct {
	name string
	addr string
	cmd  *exec.Cmd
}

func main() {
	requests := flag.Int("requests", 20000, "decisions per target and concurrency")
	keys := flag.Int("keys", 10000, "distinct remote_address values the load spreads over")
	skipBurst := flag.Bool("skip-burst", false, "skip table A (it waits for a minute boundary)")
	asJSON := flag.Bool("json", false, "print JSON instead of tables")
	flag.Parse()
	if err := run(*requests, *keys, !*skipBurst, *asJSON, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "envoy-bench:", err)
		os.Exit(1)
	}
}

func run(requests, keys int, burst, asJSON bool, stdout, stderr io.Writer) error {
	dir, err := os.MkdirTemp("", "envoy-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintln(stderr, "building envoyproxy/ratelimit and edgelimit-ratelimit...")
	theirs := filepath.Join(dir, "envoyproxy-ratelimit")
	ours := filepath.Join(dir, "edgelimit-ratelimit")
	if out, err := exec.Command("go", "build", "-o", theirs, "github.com/envoyproxy/ratelimit/src/service_cmd").CombinedOutput(); err != nil {
		return fmt.Errorf("building envoyproxy/ratelimit: %v\n%s", err, out)
	}
	if out, err := exec.Command("go", "build", "-C", "..", "-o", ours, "./cmd/edgelimit-ratelimit").CombinedOutput(); err != nil {
		return fmt.Errorf("building edgelimit-ratelimit: %v\n%s", err, out)
	}
	cfgDir := filepath.Join(dir, "runtime", "ratelimit", "config")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		return err
	}
	cfg := filepath.Join(cfgDir, "bench.yaml")
	if err := os.WriteFile(cfg, []byte(rules), 0o600); err != nil {
		return err
	}
	rs, err := redisproc.Start()
	if err != nil {
		return err
	}
	defer rs.Stop()
	ns, err := natsembed.Start()
	if err != nil {
		return err
	}
	defer ns.Stop()
	rdb := rs.Client()
	defer rdb.Close()

	ports, err := freePorts(7)
	if err != nil {
		return err
	}
	targets := []*target{
		{name: "envoyproxy/ratelimit", addr: fmt.Sprintf("127.0.0.1:%d", ports[0]), cmd: exec.Command(theirs)},
		{name: "edgelimit redis", addr: fmt.Sprintf("127.0.0.1:%d", ports[3]), cmd: exec.Command(ours,
			"-config", cfg, "-backend", "redis", "-redis-addr", rs.Addr, "-grpc-addr", fmt.Sprintf("127.0.0.1:%d", ports[3]),
			"-http-addr", fmt.Sprintf("127.0.0.1:%d", ports[4]), "-reload-interval", "0", "-log-level", "warn")},
		{name: "edgelimit budget", addr: fmt.Sprintf("127.0.0.1:%d", ports[5]), cmd: exec.Command(ours,
			"-config", cfg, "-backend", "budget", "-pop", "bench", "-budget-pops", "1", "-nats-url", ns.URL(), "-redis-addr", rs.Addr,
			"-grpc-addr", fmt.Sprintf("127.0.0.1:%d", ports[5]),
			"-http-addr", fmt.Sprintf("127.0.0.1:%d", ports[6]), "-reload-interval", "0", "-log-level", "warn")},
	}
	targets[0].cmd.Env = append(os.Environ(),
		"USE_STATSD=false", "LOG_LEVEL=warn", "REDIS_SOCKET_TYPE=tcp", "REDIS_URL="+rs.Addr,
		"RUNTIME_ROOT="+filepath.Join(dir, "runtime"), "RUNTIME_SUBDIRECTORY=ratelimit", "RUNTIME_WATCH_ROOT=false",
		"GRPC_HOST=127.0.0.1", "GRPC_PORT="+strconv.Itoa(ports[0]), "HOST=127.0.0.1", "PORT="+strconv.Itoa(ports[1]),
		"DEBUG_HOST=127.0.0.1", "DEBUG_PORT="+strconv.Itoa(ports[2]))
	clients := map[string]rlsv3.RateLimitServiceClient{}
	for _, t := range targets {
		t.cmd.Stderr = io.Discard
		t.cmd.Stdout = io.Discard
		if err := t.cmd.Start(); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		defer func(t *target) {
			_ = t.cmd.Process.Signal(os.Interrupt)
			_ = t.cmd.Wait()
		}(t)
		conn, err := grpc.NewClient(t.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return err
		}
		defer conn.Close()
		c := rlsv3.NewRateLimitServiceClient(conn)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		_, err = c.ShouldRateLimit(ctx, request("remote_address", "warmup"), grpc.WaitForReady(true))
		cancel()
		if err != nil {
			return fmt.Errorf("%s never answered: %w", t.name, err)
		}
		clients[t.name] = c
		fmt.Fprintf(stderr, "%s serving on %s\n", t.name, t.addr)
	}

	var results []result
	for _, callers := range []int{1, 8, 64} {
		for _, t := range targets {
			if err := rdb.FlushAll(context.Background()).Err(); err != nil {
				return err
			}
			r, err := load(clients[t.name], rdb, t.name, callers, requests, keys)
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "%-22s %3d callers: %8.0f decisions/s\n", t.name, callers, r.PerSecond)
			results = append(results, r)
		}
	}
	var bursts map[string]int
	if burst {
		if bursts, err = tableA(clients, targets, stderr); err != nil {
			return err
		}
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"load": results, "table_a_admitted_of_200": bursts})
	}
	fmt.Fprintf(stdout, "%-22s %7s %9s %6s %7s %7s %7s %10s %12s %10s\n", "server", "callers", "decisions", "errors", "per s", "p50 µs", "p99 µs", "cmds/1000", "scripts/1000", "CPU ms/1000")
	for _, r := range results {
		fmt.Fprintf(stdout, "%-22s %7d %9d %6d %7.0f %7.0f %7.0f %10.0f %12.0f %10.1f\n", r.Target, r.Callers, r.Decisions, r.Errors, r.PerSecond, r.P50us, r.P99us, r.RedisCmdsPerK, r.ScriptsPerK, r.RedisCPUmsPerK)
	}
	fmt.Fprintln(stdout, "cmds: Redis' commandstats (a script's own commands counted too), scripts: EVALSHA and EVAL calls, CPU: Redis' used_cpu_user+sys")
	if bursts != nil {
		fmt.Fprintln(stdout)
		fmt.Fprintf(stdout, "table A (limit 100 per 60 s, 100 requests in the last second of a minute, 100 at 1 s into the next)\n")
		for _, t := range targets {
			fmt.Fprintf(stdout, "%-22s admitted %3d of 200\n", t.name, bursts[t.name])
		}
	}
	return nil
}

func request(key, value string) *rlsv3.RateLimitRequest {
	return &rlsv3.RateLimitRequest{Domain: "bench", Descriptors: []*commonv3.RateLimitDescriptor{{
		Entries: []*commonv3.RateLimitDescriptor_Entry{{Key: key, Value: value}}}}}
}

// redisCounters reads Redis' command calls (all but INFO, which this
// benchmark sends; commands a script runs count too, as Redis counts them),
// its script calls (EVALSHA, EVAL) and its CPU seconds.
func redisCounters(rdb *goredis.Client) (calls, scripts int64, cpu float64, err error) {
	ctx := context.Background()
	stats, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, 0, 0, err
	}
	for _, line := range strings.Split(stats, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") || name == "cmdstat_info" {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(f, "calls="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				calls += n
				if name == "cmdstat_evalsha" || name == "cmdstat_eval" {
					scripts += n
				}
			}
		}
	}
	info, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, 0, 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		for _, k := range []string{"used_cpu_sys:", "used_cpu_user:"} {
			if v, ok := strings.CutPrefix(line, k); ok {
				f, _ := strconv.ParseFloat(v, 64)
				cpu += f
			}
		}
	}
	return calls, scripts, cpu, nil
}

// load sends requests decisions from callers goroutines, spread over keys
// values, and measures them. The Redis counters are read after the
// budget backend's sync interval has passed twice, so its batched writes
// count.
func load(c rlsv3.RateLimitServiceClient, rdb *goredis.Client, name string, callers, requests, keys int) (result, error) {
	calls0, scripts0, cpu0, err := redisCounters(rdb)
	if err != nil {
		return result{}, err
	}
	lat := make([][]time.Duration, callers)
	errs := make([]int, callers)
	var wg sync.WaitGroup
	begin := time.Now()
	for w := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < requests; i += callers {
				req := request("remote_address", "10."+strconv.Itoa(i%keys))
				t0 := time.Now()
				resp, err := c.ShouldRateLimit(context.Background(), req)
				lat[w] = append(lat[w], time.Since(t0))
				if err != nil || resp.OverallCode != rlsv3.RateLimitResponse_OK {
					errs[w]++
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(begin)
	time.Sleep(300 * time.Millisecond) // two budget sync intervals: its batched writes reach Redis
	calls1, scripts1, cpu1, err := redisCounters(rdb)
	if err != nil {
		return result{}, err
	}
	var all []time.Duration
	r := result{Target: name, Callers: callers}
	for w := range callers {
		all = append(all, lat[w]...)
		r.Errors += errs[w]
	}
	sort.Slice(all, func(a, b int) bool { return all[a] < all[b] })
	r.Decisions = len(all)
	r.PerSecond = float64(len(all)) / elapsed.Seconds()
	r.P50us = float64(all[len(all)/2].Microseconds())
	r.P99us = float64(all[len(all)*99/100].Microseconds())
	k := float64(len(all)) / 1000
	r.RedisCmdsPerK = float64(calls1-calls0) / k
	r.ScriptsPerK = float64(scripts1-scripts0) / k
	r.RedisCPUmsPerK = (cpu1 - cpu0) * 1000 / k
	return r, nil
}

// tableA waits for the last second of a minute, sends each target 100
// requests of one burst value from one caller, then at 1 s into the next
// minute 100 more, all targets in parallel, and counts what each admitted.
// The first burst starts a second before the boundary (not 100 ms, as in
// core's replay) so that, at about a thousand sequential calls a second,
// it ends before the boundary; a burst that did not is reported.
func tableA(clients map[string]rlsv3.RateLimitServiceClient, targets []*target, stderr io.Writer) (map[string]int, error) {
	now := time.Now()
	edge := now.Truncate(time.Minute).Add(time.Minute)
	if edge.Sub(now) < 1500*time.Millisecond {
		edge = edge.Add(time.Minute)
	}
	fmt.Fprintf(stderr, "table A: waiting %.0f s for the minute boundary...\n", time.Until(edge.Add(-time.Second)).Seconds())
	value := "table-a-" + strconv.FormatInt(edge.Unix(), 10)
	out := map[string]int{}
	var mu sync.Mutex
	var crossed []string
	for round, at := range []time.Time{edge.Add(-time.Second), edge.Add(time.Second)} {
		time.Sleep(time.Until(at))
		var wg sync.WaitGroup
		for _, t := range targets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n := 0
				for range 100 {
					resp, err := clients[t.name].ShouldRateLimit(context.Background(), request("burst", value))
					if err == nil && resp.OverallCode == rlsv3.RateLimitResponse_OK {
						n++
					}
				}
				mu.Lock()
				out[t.name] += n
				if round == 0 && time.Now().After(edge) {
					crossed = append(crossed, t.name)
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	if len(crossed) > 0 {
		return nil, fmt.Errorf("table A: the first burst to %s ended after the minute boundary; run again on a less loaded machine", strings.Join(crossed, ", "))
	}
	return out, nil
}
