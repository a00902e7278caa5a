package budget

import (
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
)

// TestNewRefusesNilClient: New refuses a nil client and a nil
// *redis.Client in the interface (a variable left unset) with ErrConfig,
// instead of returning a Limiter whose first call panics. Mutation it
// catches: the typed-nil check dropped (New returned a Limiter and its
// first Allow panicked).
func TestNewRefusesNilClient(t *testing.T) {
	cfg := Config{PoP: "a", Limit: core.PerWindow(10, time.Second), PoPs: 2}
	var unset *redis.Client
	for name, c := range map[string]redis.UniversalClient{"nil": nil, "nil *redis.Client": unset} {
		l, err := New(cfg, c, nil)
		assert.ErrorIs(t, err, ErrConfig, name)
		assert.Nil(t, l, name)
	}
}
