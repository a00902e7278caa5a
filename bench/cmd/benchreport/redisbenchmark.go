package main

import (
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// rbRun is one redis-benchmark invocation of EVALSHA.
type rbRun struct {
	clients  int // -c
	pipeline int // -P; 1 means not pipelined
	requests int // -n
}

// rbCommand is the EVALSHA command line redis-benchmark repeats: our
// sliding-window script on a key of the same form as the Go callers use,
// __rand_int__ standing for a random identity of the key space.
type rbCommand struct {
	addr     string
	sha      string
	keyspace int
	key      string   // contains __rand_int__
	args     []string // the script's ARGV
}

// redisBenchmark runs redis-benchmark once and returns requests per second.
// A reply error from the server (NOSCRIPT, a script error) fails the run.
func redisBenchmark(c rbCommand, r rbRun) (float64, error) {
	host, port, err := net.SplitHostPort(c.addr)
	if err != nil {
		return 0, err
	}
	argv := []string{"-h", host, "-p", port, "-n", strconv.Itoa(r.requests), "-c", strconv.Itoa(r.clients),
		"-P", strconv.Itoa(max(r.pipeline, 1)), "-r", strconv.Itoa(c.keyspace), "--csv",
		"EVALSHA", c.sha, "1", c.key}
	argv = append(argv, c.args...)
	cmd := exec.Command("redis-benchmark", argv...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("redis-benchmark %s: %w: %s", strings.Join(argv, " "), err, out)
	}
	text := string(out)
	if strings.Contains(text, "Error") || strings.Contains(text, "ERR") {
		return 0, fmt.Errorf("redis-benchmark reported errors: %.300s", text)
	}
	rps, err := parseCSV(text)
	if err != nil {
		return 0, err
	}
	logf("    redis-benchmark -c %d -P %d -n %d: %.0f/s (%s)", r.clients, r.pipeline, r.requests, rps,
		time.Since(start).Round(time.Millisecond))
	return rps, nil
}

// parseCSV reads the rps column of redis-benchmark --csv's last line:
// "test","rps","avg_latency_ms",...
func parseCSV(out string) (float64, error) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		f := strings.Split(lines[i], ",")
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseFloat(strings.Trim(f[1], "\" \r"), 64)
		if err == nil && v > 0 {
			return v, nil
		}
	}
	return 0, fmt.Errorf("no rps in redis-benchmark output: %.300s", out)
}
