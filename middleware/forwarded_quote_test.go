package middleware_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestForwardedOpenQuoteCannotHideTheProxysElement: a client that opens a
// quoted-string it never closes (for=1.1.1.1;x=") must not make the
// elements a trusted proxy appends to the same line part of its own, where
// the client's for= would pass for the one the proxy wrote. The proxy's
// element is still read, whatever it holds (a plain IPv4 address, a quoted
// IPv6 address, two proxies' elements), and a client's trailing backslash
// changes nothing. It catches reading such a line with quotes honoured to
// its end (the client then picks its own key).
func TestForwardedOpenQuoteCannotHideTheProxysElement(t *testing.T) {
	key, err := middleware.TrustedClientIP(middleware.Forwarded, "10.0.0.0/8")
	require.NoError(t, err)
	cases := []struct{ name, line, want string }{
		{"open quote", `for=1.1.1.1;x=", for=198.51.100.7`, "198.51.100.7"},
		{"open quote, v6 client", `for=1.1.1.1;x=", for="[2001:db8:cafe::17]:4711"`, "2001:db8:cafe::/64"},
		{"open quote, two proxies", `for=1.1.1.1;x=", for=198.51.100.7;proto=https, for=10.2.2.2`, "198.51.100.7"},
		{"open quote and backslash", `for=1.1.1.1;x="\, for=198.51.100.7`, "198.51.100.7"},
		{"open quote alone", `for=1.1.1.1, for="198.51.100.7`, ""},
	}
	for _, c := range cases {
		got := key(request("10.0.0.1:1", "Forwarded", c.line))
		assert.Equal(t, c.want, got, "%s: Forwarded: %s: key = %q, want %q", c.name, c.line, got, c.want)
	}
}

// TestForwardedOpenQuoteKeepsTheClientsQuota: behind a trusted proxy that
// appends its element to the client's Forwarded line, a client naming a
// new address before an open quote on every request is still counted under
// the address the proxy saw. It catches the open quote letting the client
// choose its key, and so a fresh quota per request.
func TestForwardedOpenQuoteKeepsTheClientsQuota(t *testing.T) {
	key, err := middleware.TrustedClientIP(middleware.Forwarded, "10.0.0.0/8")
	require.NoError(t, err)
	h := newHandler(t, middleware.WithLimit("l", newLocal(t, 2, time.Minute)), middleware.WithKeyFunc(key))
	for i, want := range []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests, http.StatusTooManyRequests} {
		line := `for=192.0.2.` + strconv.Itoa(i+1) + `;x=", for=198.51.100.7`
		wantStatus(t, get(h, "10.0.0.1:1", "Forwarded", line), want)
	}
}
