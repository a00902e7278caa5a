// Command layoutbench compares backends/redis' two key layouts for the
// sliding window counter on one private redis-server, in one run: one
// string key per identity against identities bucketed into per-window
// hashes (WithBuckets). It prints decisions per second with 1, 8 and 64
// concurrent callers (rounds interleaved, the layout measured first
// alternating, medians reported, and the median of the rounds' ratios of
// bucketed to per-identity: on a shared machine only ratios measured
// side by side mean anything), Redis' script time per
// decision (INFO commandstats: wall µs per EVALSHA, and the commands the
// script ran per decision), Redis' CPU time per decision (INFO cpu), and
// Redis used_memory grown per identity at -identities identities for both
// layouts.
//
// Usage:
//
//	go run ./cmd/layoutbench                    # 100,000 identities, 5 rounds
//	go run ./cmd/layoutbench -json              # the same figures as JSON
//	go run ./cmd/layoutbench -buckets 4096      # a bucket count other than identities/80
//
// Each layout's memory is measured on a fresh private redis-server, the
// throughput of both on one more. Progress goes to stderr, the table (or
// JSON) to stdout.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"text/tabwriter"
	"time"

	"github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/internal/redisproc"
	goredis "github.com/redis/go-redis/v9"
)

// settings are the run's knobs, from the flags.
type settings struct {
	identities int
	buckets    int
	rounds     int
	span       time.Duration
	listpack   int
	json       bool
	memOnly    bool
}

func parseFlags() settings {
	var s settings
	flag.IntVar(&s.identities, "identities", 100_000, "identities written (memory) and decided on (throughput)")
	flag.IntVar(&s.buckets, "buckets", 0, "bucket count of the bucketed layout; 0: identities/80")
	flag.IntVar(&s.rounds, "rounds", 5, "throughput rounds per layout and caller count; the median is reported")
	flag.DurationVar(&s.span, "span", time.Second, "length of one throughput measurement")
	flag.IntVar(&s.listpack, "listpack-entries", 128, "the server's hash-max-listpack-entries (128 as some deployments set it; 512 by default, compiled in and in Debian's redis.conf)")
	flag.BoolVar(&s.json, "json", false, "print JSON instead of a table")
	flag.BoolVar(&s.memOnly, "memory-only", false, "measure used_memory only, no throughput")
	flag.Parse()
	if s.buckets == 0 {
		s.buckets = max(1, s.identities/80)
	}
	return s
}

// result is every figure of the run.
type result struct {
	RedisVersion   string       `json:"redis_version"`
	Identities     int          `json:"identities"`
	Buckets        int          `json:"buckets"`
	Rounds         int          `json:"rounds"`
	Span           string       `json:"span"`
	ListpackMax    int          `json:"hash_max_listpack_entries"`
	MemoryPerID    float64      `json:"used_memory_per_identity_per_identity_layout"`
	MemoryBucketed float64      `json:"used_memory_per_identity_bucketed"`
	Throughput     []throughput `json:"throughput"`
}

// throughput is one caller count's figures for both layouts.
type throughput struct {
	Callers         int     `json:"callers"`
	PerIdentity     float64 `json:"decisions_per_second_per_identity_layout"`
	Bucketed        float64 `json:"decisions_per_second_bucketed"`
	Ratio           float64 `json:"ratio_bucketed_to_per_identity"` // median of the rounds' ratios
	ScriptUsPerID   float64 `json:"script_us_per_decision_per_identity_layout"`
	ScriptUsBuckets float64 `json:"script_us_per_decision_bucketed"`
	CPUUsPerID      float64 `json:"redis_cpu_us_per_decision_per_identity_layout"`
	CPUUsBuckets    float64 `json:"redis_cpu_us_per_decision_bucketed"`
	CommandsPerID   float64 `json:"commands_per_decision_per_identity_layout"`
	CommandsBuckets float64 `json:"commands_per_decision_bucketed"`
}

func main() {
	cfg := parseFlags()
	ctx := context.Background()
	p, err := redisproc.Start("--hash-max-listpack-entries", fmt.Sprint(cfg.listpack))
	if err != nil {
		log.Fatal(err)
	}
	defer p.Stop()
	c := newClient(p.Addr)
	defer c.Close()
	res := result{Identities: cfg.identities, Buckets: cfg.buckets, ListpackMax: cfg.listpack, Rounds: cfg.rounds, Span: cfg.span.String()}
	info, err := c.InfoMap(ctx, "server").Result()
	if err != nil {
		log.Fatal(err)
	}
	res.RedisVersion = info["Server"]["redis_version"]

	log.Printf("memory: %d identities, per-identity layout", cfg.identities)
	if res.MemoryPerID, err = onFreshRedis(cfg, func(c *goredis.Client) (float64, error) {
		v, _, err := redis.MeasureMemoryPerIdentity(ctx, c, cfg.identities)
		return v, err
	}); err != nil {
		log.Fatal(err)
	}
	log.Printf("memory: %d identities, %d buckets", cfg.identities, cfg.buckets)
	if res.MemoryBucketed, err = onFreshRedis(cfg, func(c *goredis.Client) (float64, error) {
		return redis.MeasureBucketedMemoryPerIdentity(ctx, c, cfg.identities, cfg.buckets)
	}); err != nil {
		log.Fatal(err)
	}
	if !cfg.memOnly {
		if res.Throughput, err = measureThroughput(ctx, c, cfg); err != nil {
			log.Fatal(err)
		}
	}
	if cfg.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			log.Fatal(err)
		}
		return
	}
	render(res)
}

// onFreshRedis runs f on a private redis-server of its own, then stops it:
// a layout measured on the server another was just deleted from would count
// that one's memory still being freed (UNLINK frees in the background) as
// its own growth's baseline.
func onFreshRedis(cfg settings, f func(*goredis.Client) (float64, error)) (float64, error) {
	p, err := redisproc.Start("--hash-max-listpack-entries", fmt.Sprint(cfg.listpack))
	if err != nil {
		return 0, err
	}
	defer p.Stop()
	c := newClient(p.Addr)
	defer c.Close()
	return f(c)
}

// render prints the aligned table.
func render(r result) {
	fmt.Printf("Redis %s, hash-max-listpack-entries %d, %d identities, %d buckets (%.0f identities each)",
		r.RedisVersion, r.ListpackMax, r.Identities, r.Buckets, float64(r.Identities)/float64(r.Buckets))
	if len(r.Throughput) > 0 {
		fmt.Printf(", %d rounds of %s", r.Rounds, r.Span)
	}
	fmt.Print("\n\n")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "used_memory per identity\tper-identity keys\tbucketed\tratio\t")
	fmt.Fprintf(tw, "B\t%.1f\t%.1f\t%.3f\t\n", r.MemoryPerID, r.MemoryBucketed, r.MemoryBucketed/r.MemoryPerID)
	tw.Flush()
	if len(r.Throughput) == 0 {
		return
	}
	fmt.Println()
	fmt.Fprintln(tw, "callers\tdecisions/s per-identity\tdecisions/s bucketed\tratio (median of rounds)\t"+
		"EVALSHA µs per-identity\tEVALSHA µs bucketed\tRedis CPU µs/decision per-identity\tbucketed\tcommands/decision per-identity\tbucketed\t")
	for _, t := range r.Throughput {
		fmt.Fprintf(tw, "%d\t%.0f\t%.0f\t%.3f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", t.Callers, t.PerIdentity, t.Bucketed, t.Ratio,
			t.ScriptUsPerID, t.ScriptUsBuckets, t.CPUUsPerID, t.CPUUsBuckets, t.CommandsPerID, t.CommandsBuckets)
	}
	tw.Flush()
}
