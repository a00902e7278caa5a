package clustercheck_test

import (
	"errors"
	"testing"

	redisbackend "github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/budget"
	"github.com/stretchr/testify/assert"
)

// TestOneSentinel: backends/redis and sync/budget name one sentinel,
// core.ErrNotClusterClient, so a redirection of either package matches
// both packages' ErrNotClusterClient, and core.ErrInvalid, and not
// core.ErrUnavailable. Caught mutations: either package declaring a
// sentinel of its own, core's not matching core.ErrInvalid.
func TestOneSentinel(t *testing.T) {
	moved := errors.New("MOVED 1234 127.0.0.1:7001")
	for name, err := range map[string]error{
		"backends/redis": &redisbackend.RedirectError{Op: "redis evalsha", Err: moved},
		"sync/budget":    &budget.RedirectError{Op: "budget script", Err: moved},
		"core":           core.ErrNotClusterClient,
	} {
		assert.ErrorIs(t, err, redisbackend.ErrNotClusterClient, name)
		assert.ErrorIs(t, err, budget.ErrNotClusterClient, name)
		assert.ErrorIs(t, err, core.ErrNotClusterClient, name)
		assert.ErrorIs(t, err, core.ErrInvalid, name)
		assert.NotErrorIs(t, err, core.ErrUnavailable, name)
	}
}
