package main

import (
	"fmt"
	"strings"
)

// dbOutOfRange is the error Redis answers a SELECT of a database past
// its databases setting with, which the client sends for -redis-db at
// each connection.
const dbOutOfRange = "DB index is out of range"

// dbRangeError is the refusal of a -redis-db that the startup check found
// past the databases of the Redis behind it (every connection's SELECT
// refused, so every decision would be the fail mode's), or nil when err
// is not that.
func dbRangeError(o *options, err error) error {
	if o.redisDB == 0 || err == nil || !strings.Contains(err.Error(), dbOutOfRange) {
		return nil
	}
	return fmt.Errorf("-redis-db %d: Redis has no such database (%s): want one below its databases setting (16 by default)", o.redisDB, dbOutOfRange)
}
