package redis

import "github.com/edgelimit/edgelimit/core"

// Sources returns the core.Sources this limiter's decisions can carry:
// core.SourceRedis, and core.SourceFailOpen under WithFailOpen or
// core.SourceFailClosed otherwise (package metrics uses it to create only
// the series that can move).
func (l *Limiter) Sources() []core.Source {
	if l.cfg.failOpen {
		return []core.Source{core.SourceRedis, core.SourceFailOpen}
	}
	return []core.Source{core.SourceRedis, core.SourceFailClosed}
}
