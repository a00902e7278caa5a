//go:build tools

package main

// The benchmark builds envoyproxy/ratelimit's server command from this
// module's requirements; the import keeps it in go.mod.
import _ "github.com/envoyproxy/ratelimit/src/service_cmd"
