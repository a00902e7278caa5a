package main

import (
	"fmt"
	"log/slog"
)

// checkRanges refuses the flag values that would otherwise be ignored or
// read as another setting: a -redis-timeout that is not positive (the
// startup check would get no time at all), a -log-level log/slog does not
// read, an unknown -log-format, and negative -reload-interval,
// -shutdown-timeout, -redis-pipeline-batch, -redis-pipeline-window,
// -redis-db or -local-capacity.
func checkRanges(o *options) error {
	switch {
	case o.redisTimeout <= 0:
		return fmt.Errorf("-redis-timeout %v: want a positive duration", o.redisTimeout)
	case o.reloadInterval < 0:
		return fmt.Errorf("-reload-interval %v: want 0 (never) or a positive interval", o.reloadInterval)
	case o.shutdownTimeout < 0:
		return fmt.Errorf("-shutdown-timeout %v: want 0 (at once) or a positive duration", o.shutdownTimeout)
	case o.pipelineBatch < 0:
		return fmt.Errorf("-redis-pipeline-batch %d: want 0 (off) or more", o.pipelineBatch)
	case o.pipelineWindow < 0:
		return fmt.Errorf("-redis-pipeline-window %v: want 0 or a positive duration", o.pipelineWindow)
	case o.redisDB < 0:
		return fmt.Errorf("-redis-db %d: want 0 or more", o.redisDB)
	case o.localCapacity < 0:
		return fmt.Errorf("-local-capacity %d: want 0 (the default) or more", o.localCapacity)
	}
	var level slog.Level
	if level.UnmarshalText([]byte(o.logLevel)) != nil {
		return fmt.Errorf("-log-level %q: want debug, info, warn or error", o.logLevel)
	}
	switch o.logFormat {
	case "text", "json":
	default:
		return fmt.Errorf("-log-format %q: want text or json", o.logFormat)
	}
	return nil
}
