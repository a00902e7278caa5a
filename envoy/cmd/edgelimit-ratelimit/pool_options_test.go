package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/envoy/server"
	"github.com/edgelimit/edgelimit/envoy/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPoolOptionsFromFlags: the backend's pool gets -limiter-idle,
// -max-limiters and -close-timeout, so a released limiter's close (a
// budget limiter's last Sync) has the time a stop gives the backend's;
// unset, server.DefaultCloseTimeout. It catches the pool left on its own
// default close timeout whatever -close-timeout says.
func TestPoolOptionsFromFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want service.PoolOptions
	}{
		{nil, service.PoolOptions{Idle: 5 * time.Minute, Max: 256, CloseTimeout: server.DefaultCloseTimeout}},
		{[]string{"-close-timeout", "2s", "-limiter-idle", "1m", "-max-limiters", "3"},
			service.PoolOptions{Idle: time.Minute, Max: 3, CloseTimeout: 2 * time.Second}},
	} {
		o, err := parse(append([]string{"-config", "c.yaml"}, c.args...), func(string) string { return "" }, &bytes.Buffer{})
		require.NoError(t, err, "%v", c.args)
		assert.Equal(t, c.want, poolOptions(o), "%v", c.args)
	}
}
