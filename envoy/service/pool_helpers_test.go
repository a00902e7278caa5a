package service

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/envoy/config"
	"github.com/edgelimit/edgelimit/internal/redistest"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// poolT0 is the start of an hour (and of every shorter window).
var poolT0 = time.UnixMilli(1_700_006_400_000)

// settle waits for the closes of the limiters p released.
func settle(p *pool) { p.closing.Wait() }

// edgeRules is one domain, edge, whose one rule limits remote_address to
// 10 a minute.
const edgeRules = `
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 10}
`

// loadRules writes yaml to a file and loads it.
func loadRules(t *testing.T, yaml string) *config.Set {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o600))
	set, err := config.Load(path, config.Options{})
	require.NoError(t, err)
	return set
}

// overridden is a request of edge's remote_address ip whose descriptor
// carries a limit override of rpu per unit.
func overridden(ip string, rpu uint32, unit typev3.RateLimitUnit) *rlsv3.RateLimitRequest {
	return &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*commonv3.RateLimitDescriptor{{
		Entries: []*commonv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: ip}},
		Limit:   &commonv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: rpu, Unit: unit}}}}
}

// plain is a request of edge's remote_address ip, limited by the rule.
func plain(ip string) *rlsv3.RateLimitRequest {
	return &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*commonv3.RateLimitDescriptor{{
		Entries: []*commonv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: ip}}}}}
}

// harnessClient starts a private redis-server for t and returns a client
// of it (NewRedisClient with timeout), both stopped when t ends.
func harnessClient(t *testing.T, timeout time.Duration) goredis.UniversalClient {
	t.Helper()
	rs := redistest.Start(t)
	rdb, err := NewRedisClient(RedisClientOptions{Addrs: []string{rs.Addr}, Timeout: timeout})
	require.NoError(t, err)
	t.Cleanup(func() { rdb.Close() })
	return rdb
}
