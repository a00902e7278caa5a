package clustercheck

import goredis "github.com/redis/go-redis/v9"

// IsRedirect reports whether err is a Redis Cluster node's MOVED or ASK
// reply (false for nil).
func IsRedirect(err error) bool {
	if err == nil {
		return false
	}
	if _, ok := goredis.IsMovedError(err); ok {
		return true
	}
	if _, ok := goredis.IsAskError(err); ok {
		return true
	}
	return goredis.HasErrorPrefix(err, "MOVED ") || goredis.HasErrorPrefix(err, "ASK ")
}
