package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/envoy/config"
	"github.com/edgelimit/edgelimit/envoy/server"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// withConfig writes yaml to a temporary file and points o at it.
func withConfig(t *testing.T, o server.Options, yaml string) server.Options {
	t.Helper()
	o.ConfigPath = filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(o.ConfigPath, []byte(yaml), 0o600))
	if o.Logger == nil {
		o.Logger = quietLogger()
	}
	return o
}

func req(domain string, ds ...*commonv3.RateLimitDescriptor) *rlsv3.RateLimitRequest {
	return &rlsv3.RateLimitRequest{Domain: domain, Descriptors: ds}
}

func TestConfigErrorBeforeServing(t *testing.T) {
	o := withConfig(t, localOpts(nil), "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second}\n")
	_, err := server.New(o)
	require.Error(t, err)
	assert.ErrorIs(t, err, config.ErrMissing)
	assert.Equal(t, o.ConfigPath+":4: descriptors[0].rate_limit.requests_per_unit: missing field: requests_per_unit is required unless unlimited: true", err.Error(),
		"one line: file, line, YAML path, problem")
}

func TestReloadOnChange(t *testing.T) {
	reloaded := make(chan error, 4)
	o := localOpts(core.NewManualClock(t0))
	o.OnReload = func(err error) { reloaded <- err }
	r := start(t, "domain: edge\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 1}\n", o)
	require.Equal(t, 1, r.admitted(t, 3, "edge", desc("k", "v")), "the first configuration allows 1 a minute")

	changed, err := r.srv.Reload()
	require.NoError(t, err)
	assert.False(t, changed, "an unchanged file is not reloaded")
	require.Empty(t, reloaded)

	require.NoError(t, os.WriteFile(r.cfgPath, []byte("domain: edge\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 5}\n"), 0o600))
	changed, err = r.srv.Reload()
	require.NoError(t, err)
	assert.True(t, changed)
	require.NoError(t, <-reloaded)
	assert.Equal(t, 5, r.admitted(t, 6, "edge", desc("k", "v")), "the new limit of 5 applies; on the local backend a changed limit counts afresh")

	require.NoError(t, os.WriteFile(r.cfgPath, []byte("domain: edge\ndescriptors:\n  - key: k\n    rate_limit: {unit: fortnight, requests_per_unit: 1}\n"), 0o600))
	changed, err = r.srv.Reload()
	assert.True(t, changed)
	require.Error(t, err)
	assert.ErrorIs(t, err, config.ErrBadValue)
	require.Error(t, <-reloaded)
	assert.Equal(t, 5, r.admitted(t, 6, "edge", desc("k", "w")), "a bad file leaves the previous configuration (5 a minute) in force")
}

// TestReloadLoop: the background loop finds a change by itself.
func TestReloadLoop(t *testing.T) {
	reloaded := make(chan error, 1)
	o := localOpts(core.NewManualClock(t0))
	o.ReloadInterval = 10_000_000 // 10 ms
	o.OnReload = func(err error) {
		select {
		case reloaded <- err:
		default:
		}
	}
	r := start(t, "domain: a\n", o)
	require.NoError(t, os.WriteFile(r.cfgPath, []byte("domain: b\n"), 0o600))
	require.NoError(t, <-reloaded, "the loop reloads the changed file")
	assert.Equal(t, []string{"b"}, r.srv.Service().Config().Domains())
}

func TestHealthMetricsAndShutdown(t *testing.T) {
	o := localOpts(core.NewManualClock(t0))
	r := start(t, rules, o)
	hc := healthpb.NewHealthClient(r.conn)
	h, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{Service: "envoy.service.ratelimit.v3.RateLimitService"})
	require.NoError(t, err)
	assert.Equal(t, healthpb.HealthCheckResponse_SERVING, h.Status)

	r.admitted(t, 4, "edge", desc("remote_address", "10.0.0.1"))
	r.ask(t, "edge", 0, desc("client", "bot"))
	r.ask(t, "edge", 0, desc("client", "bot"), desc("unknown", "x"))
	body := scrape(t, r)
	for _, want := range []string{
		`edgelimit_envoy_requests_total{code="ok",domain="edge"} 5`,
		`edgelimit_envoy_requests_total{code="over_limit",domain="edge"} 1`,
		`edgelimit_envoy_rule_decisions_total{domain="edge",result="over_limit",rule="per-ip"} 1`,
		`edgelimit_envoy_rule_decisions_total{domain="edge",result="shadow_over_limit",rule="descriptors[4]"} 1`,
		`edgelimit_envoy_config_loads_total{result="ok"} 1`,
		`edgelimit_envoy_rule_decisions_total{domain="edge",result="no_rule",rule="(none)"}`,
	} {
		assert.Contains(t, body, want, "/metrics after 4 per-ip requests (3 allowed) and 2 shadow bot requests")
	}
	resp, err := http.Get(r.httpURL + "/healthcheck")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	require.NoError(t, r.srv.Shutdown(context.Background()))
	_, err = r.client.ShouldRateLimit(context.Background(), req("edge", desc("remote_address", "10.0.0.3")))
	assert.Error(t, err, "a stopped server takes no calls")
	_, _, err = o.Service.Backend.Acquire(core.PerWindow(1, 1e9))
	assert.True(t, errors.Is(err, core.ErrClosed), "Shutdown closed the backend")
	assert.True(t, strings.HasPrefix(r.httpURL, "http://"))
}

// scrape reads the server's /metrics.
func scrape(t *testing.T, r *running) string {
	t.Helper()
	resp, err := http.Get(r.httpURL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}

// TestReloadDropsNoRequest: callers keep asking while the file changes back
// and forth and is reloaded; every call gets an answer.
func TestReloadDropsNoRequest(t *testing.T) {
	o := localOpts(core.NewManualClock(t0))
	r := start(t, hundred, o)
	other := strings.Replace(hundred, "100", "50", 1)
	done := make(chan struct{})
	answered := make(chan int64, 1)
	go func() { answered <- hammerUntil(r, done) }()
	for i := range 20 {
		body := hundred
		if i%2 == 0 {
			body = other
		}
		require.NoError(t, os.WriteFile(r.cfgPath, []byte(body), 0o600))
		changed, err := r.srv.Reload()
		require.NoError(t, err)
		require.True(t, changed, "reload %d saw the change", i)
	}
	close(done)
	n := <-answered
	assert.GreaterOrEqual(t, n, int64(0), "no call failed during 20 reloads (−1 means one did)")
}

// hammerUntil asks until done is closed; it returns the calls answered, or
// −1 when one failed.
func hammerUntil(r *running, done <-chan struct{}) int64 {
	var n int64
	for {
		select {
		case <-done:
			return n
		default:
		}
		if _, err := r.client.ShouldRateLimit(context.Background(), req("a", desc("k", "v"))); err != nil {
			return -1
		}
		n++
	}
}

// TestMetricLabels: a domain the configuration lacks is "unknown" (clients
// cannot mint series), and detailed_metric adds the request's values.
func TestMetricLabels(t *testing.T) {
	r := start(t, "domain: d\ndescriptors:\n  - key: user\n    rate_limit: {unit: minute, requests_per_unit: 5}\n    detailed_metric: true\n  - key: ip\n    rate_limit: {unit: minute, requests_per_unit: 5, name: per-ip}\n",
		localOpts(core.NewManualClock(t0)))
	r.ask(t, "made-up-domain-1", 0, desc("user", "a"))
	r.ask(t, "made-up-domain-2", 0, desc("user", "a"))
	r.ask(t, "d", 0, desc("user", "alice"), desc("ip", "10.0.0.1"))
	r.ask(t, "d", 0, desc("ip", "10.0.0.2"))
	body := scrape(t, r)
	assert.Contains(t, body, `edgelimit_envoy_requests_total{code="ok",domain="unknown"} 2`)
	assert.NotContains(t, body, "made-up-domain")
	assert.Contains(t, body, `edgelimit_envoy_rule_decisions_total{domain="d",result="ok",rule="descriptors[0]|user=alice"} 1`, "detailed_metric: one series per value")
	assert.Contains(t, body, `edgelimit_envoy_rule_decisions_total{domain="d",result="ok",rule="per-ip"} 2`, "without it, one series per rule")
}
