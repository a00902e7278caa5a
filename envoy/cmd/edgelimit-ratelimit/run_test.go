package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		{"bad fail mode", []string{"-config", good, "-fail-mode", "maybe"}, nil, `-fail-mode "maybe"`},
		{"bad env", []string{"-config", good}, map[string]string{"EDGELIMIT_REDIS_TIMEOUT": "soon"}, `EDGELIMIT_REDIS_TIMEOUT="soon"`},
		{"bad algorithm", []string{"-config", good, "-algorithm", "gcra"}, nil, `-algorithm "gcra"`},
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
	env := map[string]string{"EDGELIMIT_BACKEND": "local", "EDGELIMIT_CONFIG": "from-env.yaml", "EDGELIMIT_HYBRID_MARGIN": "0.2"}
	o, err := parse([]string{"-config", "from-flag.yaml"}, func(k string) string { return env[k] }, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, "from-flag.yaml", o.config, "a flag wins over its variable")
	assert.Equal(t, "local", o.backend, "a variable sets an absent flag")
	assert.Equal(t, 0.2, o.hybridMargin)
	assert.Equal(t, "EDGELIMIT_REDIS_PIPELINE_BATCH", envName("redis-pipeline-batch"))
}

// TestServeAndStop runs the command on the local backend, asks it over
// gRPC, and stops it by cancelling its context.
func TestServeAndStop(t *testing.T) {
	cfg := writeConfig(t, "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 1}\n")
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	exit := make(chan int, 1)
	var stderr bytes.Buffer
	go func() {
		exit <- run(ctx, []string{"-config", cfg, "-backend", "local", "-grpc-addr", "127.0.0.1:0", "-http-addr", "", "-log-format", "json"},
			noEnv, &stderr, nil, func(g, _ string) { addrs <- g })
	}()
	addr := <-addrs
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	c := rlsv3.NewRateLimitServiceClient(conn)
	req := &rlsv3.RateLimitRequest{Domain: "d", Descriptors: []*commonv3.RateLimitDescriptor{{Entries: []*commonv3.RateLimitDescriptor_Entry{{Key: "k", Value: "v"}}}}}
	var codes []string
	for range 2 {
		resp, err := c.ShouldRateLimit(ctx, req)
		require.NoError(t, err)
		codes = append(codes, resp.OverallCode.String())
	}
	assert.Equal(t, []string{"OK", "OVER_LIMIT"}, codes, "1 an hour")
	cancel()
	assert.Equal(t, exitOK, <-exit, "a graceful stop exits 0; log: %s", stderr.String())
	assert.Contains(t, stderr.String(), `"msg":"stopped"`, "structured JSON logs")
}
