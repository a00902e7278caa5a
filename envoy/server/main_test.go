package server_test

import (
	"context"
	"os"
	"testing"

	goredis "github.com/redis/go-redis/v9"
)

// quietRedis drops go-redis' own log lines (dial failures while a test has
// stopped Redis on purpose).
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	goredis.SetLogger(quietRedis{})
	os.Exit(m.Run())
}
