package middleware_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/middleware"
	"github.com/stretchr/testify/assert"
)

// TestDefaultKeyGroupsAnIPv6Subnet: the default key, RemoteAddrKey, keys
// an IPv6 peer by its /64. A single IPv6 subscriber is routed a /64 or
// more (2^64 addresses, picked freely by the host: privacy addresses
// rotate on their own), so keyed by the whole address one client would get
// a fresh quota per request by changing its interface identifier: under a
// limit of 1, three requests from one /64 are admitted once.
func TestDefaultKeyGroupsAnIPv6Subnet(t *testing.T) {
	rec := newLocal(t, 1, time.Minute)
	h := newHandler(t, middleware.WithLimit("ip", rec))
	admitted := 0
	for _, peer := range []string{"[2001:db8:1:2::1]:1000", "[2001:db8:1:2::2]:1000", "[2001:db8:1:2:aaaa::3]:1000"} {
		if get(h, peer).Code == http.StatusOK {
			admitted++
		}
	}
	assert.Equal(t, 1, admitted, "three requests from one /64 under a limit of 1: %d admitted", admitted)
}
