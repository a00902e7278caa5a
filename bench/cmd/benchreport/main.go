// Command benchreport runs edgelimit's benchmarks against its peer
// libraries and against the physical limit of the Redis it runs on, all in
// one process and one run, and writes the Markdown report (by default
// docs/benchmarks.md, via make bench).
//
// Every figure in a table is measured in this run, on a private
// redis-server it starts and stops itself, and every row carries its ratio
// to our own figure: on a shared machine only ratios measured together mean
// anything. Each row is measured -rounds times, interleaved with the other
// rows of its table, and the median is reported.
//
// Usage:
//
//	go run ./cmd/benchreport -out ../docs/benchmarks.md
//	go run ./cmd/benchreport -quick -out /tmp/smoke.md
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func main() {
	testing.Init() // registers the test.* flags testing.Benchmark reads
	cfg := parseFlags()
	start := time.Now()
	report, err := run(context.Background(), cfg, start)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(cfg.out), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(cfg.out, []byte(report), 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("wrote %s in %s", cfg.out, time.Since(start).Round(time.Second))
}

// settings are the run's knobs, from the flags.
type settings struct {
	out        string
	quick      bool
	rounds     int
	benchtime  time.Duration
	warmKeys   int
	identities int
	rbScale    float64 // scales redis-benchmark's request counts
	pipeWindow time.Duration
	pipeBatch  int
	tables     map[string]bool
	argv       string
}

var tableNames = []string{"local", "redis", "memory", "gubernator"}

func parseFlags() settings {
	var s settings
	var only string
	flag.StringVar(&s.out, "out", "benchmarks.md", "where to write the Markdown report")
	flag.BoolVar(&s.quick, "quick", false, "smoke run: one short round of everything, 20,000 identities for memory")
	flag.IntVar(&s.rounds, "rounds", 3, "rounds per row; the median is reported")
	flag.DurationVar(&s.benchtime, "benchtime", 700*time.Millisecond, "target time of one measurement (testing's -benchtime)")
	flag.IntVar(&s.warmKeys, "keys", 100_000, "warm identities the throughput tables draw from")
	flag.IntVar(&s.identities, "identities", 1_000_000, "identities written for the memory table")
	flag.DurationVar(&s.pipeWindow, "pipe-window", 50*time.Microsecond, "WithPipelining window of our pipelined Redis mode")
	flag.IntVar(&s.pipeBatch, "pipe-batch", 64, "WithPipelining maxBatch of our pipelined Redis mode")
	flag.StringVar(&only, "tables", strings.Join(tableNames, ","), "tables to run, comma-separated: "+strings.Join(tableNames, ", "))
	flag.Parse()
	s.rbScale = 1
	if s.quick {
		s.rounds, s.benchtime, s.identities, s.rbScale = 1, 100*time.Millisecond, 20_000, 0.1
	}
	s.tables = map[string]bool{}
	for _, t := range strings.Split(only, ",") {
		s.tables[strings.TrimSpace(t)] = true
	}
	if err := flag.Set("test.benchtime", s.benchtime.String()); err != nil {
		log.Fatal(err)
	}
	s.argv = "go run ./cmd/benchreport " + strings.Join(os.Args[1:], " ")
	return s
}

// section is one table's part of the report.
type section func(d *doc)

// run measures every selected table and renders the report.
func run(ctx context.Context, cfg settings, start time.Time) (string, error) {
	e, err := newEnv(cfg)
	if err != nil {
		return "", err
	}
	defer e.close()
	steps := []struct {
		name string
		f    func(context.Context, *env) (section, error)
	}{
		{"local", localTable},
		{"redis", redisTable},
		{"memory", memoryTable},
		{"gubernator", gubernatorTable},
	}
	var parts []section
	for _, st := range steps {
		if !cfg.tables[st.name] {
			continue
		}
		log.Printf("table %s ...", st.name)
		t0 := time.Now()
		sec, err := st.f(ctx, e)
		if err != nil {
			log.Printf("table %s failed: %v", st.name, err)
			name, msg := st.name, err.Error()
			sec = func(d *doc) {
				d.heading(2, "Table "+name)
				d.para("**Not measured: the run failed:** %s", msg)
			}
		}
		runtime.GC() // the next table starts from a collected heap, not this one's garbage
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		log.Printf("table %s done in %s (live heap after it: %d MB)", st.name, time.Since(t0).Round(time.Second), ms.HeapAlloc>>20)
		parts = append(parts, sec)
	}
	var d doc
	writeHeader(&d, e, time.Since(start))
	for _, p := range parts {
		p(&d)
	}
	writePeers(&d)
	return d.String(), nil
}

func logf(format string, args ...any) { log.Printf(format, args...) }
