package redis

import (
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/lua"
	goredis "github.com/redis/go-redis/v9"
)

// scripts holds one loaded script per algorithm, indexed by core.Algorithm.
var scripts = loadScripts()

func loadScripts() []*goredis.Script {
	s := make([]*goredis.Script, len(core.Algorithms))
	for _, a := range core.Algorithms {
		src, err := lua.Source(a.String())
		if err != nil {
			panic("backends/redis: " + err.Error())
		}
		s[a] = goredis.NewScript(src)
	}
	return s
}

// Script returns the Lua script that decides for algorithm a (see package
// lua for its KEYS and ARGV), or nil for an unknown algorithm. Tools use it
// to load the script or benchmark it with redis-benchmark.
func Script(a core.Algorithm) *goredis.Script {
	if int(a) < len(scripts) {
		return scripts[a]
	}
	return nil
}

// request is one script call: its key and ARGV.
type request struct {
	keys []string
	args []any
}

// newRequest builds the call deciding n units for key at now (ms).
func (l *Limiter) newRequest(key string, now, n int64, commit bool) request {
	return request{
		keys: []string{key},
		args: []any{now, l.limit.WindowMillis(), l.limit.Max, n,
			boolArg(commit), boolArg(l.cfg.serverTime), l.cfg.slack.Milliseconds()},
	}
}

func boolArg(b bool) int {
	if b {
		return 1
	}
	return 0
}

// parseReply turns the script's {allowed, remaining, retry_ms, reset_ms}
// into a Decision.
func (l *Limiter) parseReply(v any) (core.Decision, error) {
	r, ok := v.([]any)
	if !ok || len(r) != 4 {
		return core.Decision{}, fmt.Errorf("unexpected script reply %v", v)
	}
	var x [4]int64
	for i := range x {
		if x[i], ok = r[i].(int64); !ok {
			return core.Decision{}, fmt.Errorf("unexpected script reply %v", v)
		}
	}
	return core.Decision{
		Allowed:    x[0] == 1,
		Limit:      l.limit.Max,
		Remaining:  x[1],
		RetryAfter: time.Duration(x[2]) * time.Millisecond,
		ResetAfter: time.Duration(x[3]) * time.Millisecond,
		Source:     core.SourceRedis,
	}, nil
}
