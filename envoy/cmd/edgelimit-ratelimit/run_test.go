package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/edgelimit/edgelimit/envoy/server"
	"github.com/edgelimit/edgelimit/envoy/service"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/internal/tlstest"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(p, []byte(yaml), 0o600))
	return p
}

func noEnv(string) string { return "" }

func TestUsageErrors(t *testing.T) {
	good := writeConfig(t, "domain: d\n")
	bad := writeConfig(t, "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1, algorithm: gcra}\n")
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no config", nil, nil, "-config (or EDGELIMIT_CONFIG) is required"},
		{"bad backend", []string{"-config", good, "-backend", "memcached"}, nil, `-backend "memcached"`},
		{"the removed hybrid backend", []string{"-config", good, "-backend", "hybrid"}, nil, `-backend "hybrid": want local, redis or budget`},
		{"bad fail mode", []string{"-config", good, "-fail-mode", "maybe"}, nil, `-fail-mode "maybe"`},
		{"bad env", []string{"-config", good}, map[string]string{"EDGELIMIT_REDIS_TIMEOUT": "soon"}, `EDGELIMIT_REDIS_TIMEOUT="soon"`},
		{"bad algorithm", []string{"-config", good, "-algorithm", "gcra"}, nil, `-algorithm "gcra"`},
		{"budget without its PoPs", []string{"-config", good, "-backend", "budget"}, nil, "-budget-pops 0: -backend budget needs the number of instances"},
		{"bad budget sync", []string{"-config", good, "-budget-sync", "0s"}, nil, "-budget-sync 0s: want a positive interval"},
		{"bad close timeout", []string{"-config", good, "-close-timeout", "-1s"}, nil, "-close-timeout -1s: want a positive duration"},
		{"bad limiter idle", []string{"-config", good, "-limiter-idle", "0s"}, nil, "-limiter-idle 0s: want a positive duration"},
		{"bad max limiters", []string{"-config", good, "-max-limiters", "0"}, nil, "-max-limiters 0: want at least 1"},
		{"config error", []string{"-config", bad, "-backend", "local"}, nil, bad + `:4: descriptors[0].rate_limit.algorithm: bad value: unknown algorithm "gcra"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stderr bytes.Buffer
			env := func(k string) string { return c.env[k] }
			code := run(context.Background(), c.args, env, &stderr, nil, func(string, string) { t.Error("must not serve") })
			assert.Equal(t, exitUsage, code, "exit code for %s", c.name)
			assert.Contains(t, stderr.String(), c.want)
			assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "one line: %q", stderr.String())
		})
	}
}

func TestEnvironmentAndFlags(t *testing.T) {
	env := map[string]string{"EDGELIMIT_BACKEND": "local", "EDGELIMIT_CONFIG": "from-env.yaml", "EDGELIMIT_BUDGET_POPS": "3"}
	o, err := parse([]string{"-config", "from-flag.yaml"}, func(k string) string { return env[k] }, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, "from-flag.yaml", o.config, "a flag wins over its variable")
	assert.Equal(t, "local", o.backend, "a variable sets an absent flag")
	assert.Equal(t, 3, o.budgetPoPs)
	assert.Equal(t, service.DefaultIdle, o.limiterIdle, "-limiter-idle's default")
	assert.Equal(t, service.DefaultMaxLimiters, o.maxLimiters, "-max-limiters' default")
	assert.Equal(t, server.DefaultCloseTimeout, o.closeTimeout, "-close-timeout's default")
	assert.Equal(t, "EDGELIMIT_REDIS_PIPELINE_BATCH", envName("redis-pipeline-batch"))
}

// serving is the command running in a goroutine.
type serving struct {
	cancel context.CancelFunc
	exit   chan int
	stderr *syncBuffer
	client rlsv3.RateLimitServiceClient
}

// syncBuffer is a bytes.Buffer safe for the command's logger and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serve runs the command with args (plus free listen addresses) and
// connects a client.
func serve(t *testing.T, args ...string) *serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &serving{cancel: cancel, exit: make(chan int, 1), stderr: &syncBuffer{}}
	addrs := make(chan string, 1)
	args = append(args, "-grpc-addr", "127.0.0.1:0", "-http-addr", "")
	go func() {
		s.exit <- run(ctx, args, noEnv, s.stderr, nil, func(g, _ string) { addrs <- g })
	}()
	var addr string
	select {
	case addr = <-addrs:
	case code := <-s.exit:
		require.FailNow(t, "the command exited before serving", "exit %d: %s", code, s.stderr.String())
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	s.client = rlsv3.NewRateLimitServiceClient(conn)
	return s
}

// codes sends n requests of k=v in domain d and returns the overall codes.
func (s *serving) codes(t *testing.T, n int) []string {
	t.Helper()
	req := &rlsv3.RateLimitRequest{Domain: "d", Descriptors: []*commonv3.RateLimitDescriptor{{Entries: []*commonv3.RateLimitDescriptor_Entry{{Key: "k", Value: "v"}}}}}
	var out []string
	for range n {
		resp, err := s.client.ShouldRateLimit(context.Background(), req)
		require.NoError(t, err)
		out = append(out, resp.OverallCode.String())
	}
	return out
}

// stop cancels the command's context and returns its exit code.
func (s *serving) stop() int {
	s.cancel()
	return <-s.exit
}

const oneAnHour = "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 1}\n"

// TestServeAndStop runs the command on the local backend, asks it over
// gRPC, and stops it by cancelling its context.
func TestServeAndStop(t *testing.T) {
	s := serve(t, "-config", writeConfig(t, oneAnHour), "-backend", "local", "-log-format", "json")
	assert.Equal(t, []string{"OK", "OVER_LIMIT"}, s.codes(t, 2), "1 an hour")
	assert.Equal(t, exitOK, s.stop(), "a graceful stop exits 0; log: %s", s.stderr.String())
	assert.Contains(t, s.stderr.String(), `"msg":"stopped"`, "structured JSON logs")
}

const tenAnHour = "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 10}\n"

// TestServeBudget runs the command on the budget backend (a deployment of
// one instance) on a private redis-server: the limit holds exactly, and
// the limit's state is in Redis under the prefix. (With -budget-pops 2
// and one instance running, the absent one's free units, one per window
// and identity, stay reserved: 8 of 10.)
func TestServeBudget(t *testing.T) {
	rs := redistest.Start(t)
	s := serve(t, "-config", writeConfig(t, tenAnHour), "-backend", "budget", "-budget-pops", "1", "-redis-addr", rs.Addr, "-redis-timeout", "2s", "-redis-prefix", "bud")
	got := s.codes(t, 12)
	assert.Equal(t, 10, strings.Count(strings.Join(got, " "), "OK"), "10 an hour: %v", got)
	assert.Equal(t, []string{"OVER_LIMIT", "OVER_LIMIT"}, got[10:], "the 11th and 12th are over: %v", got)
	assert.Equal(t, exitOK, s.stop(), "a graceful stop (a last Sync) exits 0; log: %s", s.stderr.String())
	c := rs.Client()
	defer c.Close()
	keys, err := c.Keys(context.Background(), "{bud-10-3600000*").Result()
	require.NoError(t, err)
	assert.NotEmpty(t, keys, "the limit's state is in Redis under its namespace")
}

// TestRedisTLSFlags: the -redis-tls flags reach a TLS-only redis-server
// that requires client certificates; without the client certificate the
// handshake fails and the closed fail mode answers OVER_LIMIT.
func TestRedisTLSFlags(t *testing.T) {
	f := tlstest.New(t)
	rs := redistest.StartTLS(t, f)
	cfg := writeConfig(t, oneAnHour)
	s := serve(t, "-config", cfg, "-backend", "redis", "-redis-addr", rs.Addr, "-redis-tls",
		"-redis-ca", f.CA, "-redis-cert", f.ClientCert, "-redis-key", f.ClientKey, "-redis-timeout", "2s", "-fail-mode", "closed")
	assert.Equal(t, []string{"OK", "OVER_LIMIT"}, s.codes(t, 2), "1 an hour, counted at the TLS Redis")
	assert.Equal(t, exitOK, s.stop())
	c := rs.Client() // with f's client certificate
	defer c.Close()
	keys, err := c.Keys(context.Background(), "el:*").Result()
	require.NoError(t, err)
	assert.Len(t, keys, 1, "the counter is in the TLS Redis")

	s = serve(t, "-config", cfg, "-backend", "redis", "-redis-addr", rs.Addr, "-redis-tls",
		"-redis-ca", f.CA, "-redis-timeout", "2s", "-fail-mode", "closed", "-redis-prefix", "other")
	assert.Equal(t, []string{"OVER_LIMIT"}, s.codes(t, 1), "no client certificate: Redis refuses, fail-closed denies")
	assert.Equal(t, exitOK, s.stop())
}
