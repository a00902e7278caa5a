package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// scrapeRedisSeries returns the lines of /metrics at httpAddr of
// client="main"'s Redis round trips and errors.
func scrapeRedisSeries(t *testing.T, httpAddr string) []string {
	t.Helper()
	resp, err := http.Get("http://" + httpAddr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.Split(string(body), "\n") {
		if (strings.HasPrefix(l, "edgelimit_redis_roundtrips_total{") || strings.HasPrefix(l, "edgelimit_redis_errors_total{")) &&
			strings.Contains(l, `client="main"`) {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestStartupCheckNotInRedisMetrics: the startup check's commands to
// Redis (CheckClient: CLUSTER SLOTS, which a server not in cluster mode
// refuses with an error reply, then on a cluster a pipeline of reads that
// an ACL user without the prefix's keys is refused, NOPERM) are not in
// the Redis series operators alert on: after startup, before any request,
// client="main" counts no round trip and no error, for the redis and
// budget backends; the redis backend's first request is counted. It
// catches a check run through the metrics hook (a reply error at every
// startup on a plain Redis) and a hook never installed.
func TestStartupCheckNotInRedisMetrics(t *testing.T) {
	rs := redistest.Start(t)
	cfg := writeConfig(t, oneAnHour)
	for _, backend := range [][]string{{"-backend", "redis"}, {"-backend", "budget", "-budget-pops", "1", "-redis-prefix", "b"}} {
		t.Run(backend[1], func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			stderr := &syncBuffer{}
			addrs := make(chan [2]string, 1)
			exit := make(chan int, 1)
			args := append([]string{"-config", cfg, "-redis-addr", rs.Addr, "-redis-timeout", "2s",
				"-grpc-addr", "127.0.0.1:0", "-http-addr", "127.0.0.1:0"}, backend...)
			go func() { exit <- run(ctx, args, noEnv, stderr, nil, func(g, h string) { addrs <- [2]string{g, h} }) }()
			var a [2]string
			select {
			case a = <-addrs:
			case code := <-exit:
				require.FailNow(t, "exited before serving", "exit %d: %s", code, stderr.String())
			}
			series := scrapeRedisSeries(t, a[1])
			require.NotEmpty(t, series, "the Redis series are served")
			for _, l := range series {
				assert.True(t, strings.HasSuffix(l, "} 0"), "after startup, before any request: %s", l)
			}
			if backend[1] == "redis" {
				conn, err := grpc.NewClient(a[0], grpc.WithTransportCredentials(insecure.NewCredentials()))
				require.NoError(t, err)
				defer conn.Close()
				_, err = rlsv3.NewRateLimitServiceClient(conn).ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "d",
					Descriptors: []*commonv3.RateLimitDescriptor{{Entries: []*commonv3.RateLimitDescriptor_Entry{{Key: "k", Value: "v"}}}}})
				require.NoError(t, err)
				assert.NotContains(t, scrapeRedisSeries(t, a[1]), `edgelimit_redis_roundtrips_total{client="main",kind="command"} 0`,
					"a request's decision is counted")
			}
			cancel()
			assert.Equal(t, exitOK, <-exit, "log: %s", stderr.String())
		})
	}
}
