package redis

import (
	"fmt"

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

// newRequest builds the call deciding n units for key at now (ms). Only
// now and n are boxed per call (n rarely allocates: Go boxes small integers
// for free); the policy's arguments were boxed once, by New.
func (l *Limiter) newRequest(key string, now, n int64, commit bool) request {
	a := l.args
	return request{
		keys: []string{key},
		args: []any{now, a.window, a.max, n, a.commit[boolArg(commit)], a.serverTime, a.slack},
	}
}

// fixedArgs are a limiter's script arguments that never change, boxed once.
type fixedArgs struct {
	window, max, serverTime, slack any
	commit                         [2]any // [boolArg(commit)]
}

func newFixedArgs(l core.Limit, c config) fixedArgs {
	return fixedArgs{window: l.WindowMillis(), max: l.Max, serverTime: boolArg(c.serverTime),
		slack: c.slack.Milliseconds(), commit: [2]any{0, 1}}
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
		RetryAfter: core.MillisDuration(x[2]),
		ResetAfter: core.MillisDuration(x[3]),
		Source:     core.SourceRedis,
	}, nil
}
