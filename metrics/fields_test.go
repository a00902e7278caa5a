package metrics_test

import (
	"maps"
	"testing"

	"github.com/edgelimit/edgelimit/metrics"
	"github.com/stretchr/testify/assert"
)

type nodeStats struct {
	GossipSent      uint64
	RedisRoundTrips uint64
	NATSErrors      int
	BatchMean       float64
	Name            string // skipped: not a number
	hidden          uint64 // skipped: unexported
}

func TestFields(t *testing.T) {
	s := nodeStats{GossipSent: 3, RedisRoundTrips: 7, NATSErrors: 2, BatchMean: 1.5, Name: "x", hidden: 9}
	want := map[string]float64{"gossip_sent": 3, "redis_round_trips": 7, "nats_errors": 2, "batch_mean": 1.5}
	for _, v := range []any{s, &s} {
		got := metrics.Fields(v)
		assert.True(t, maps.Equal(got, want), "Fields(%T) = %v, want %v", v, got, want)
	}
	for _, v := range []any{nil, 3, (*nodeStats)(nil)} {
		got := metrics.Fields(v)
		assert.Empty(t, got, "Fields(%#v) = %v, want empty", v, got)
	}
	_ = s.hidden
}
