package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func request(peer string, headers ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = peer
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	return r
}

func TestRemoteAddrKey(t *testing.T) {
	cases := map[string]string{
		"192.0.2.1:5000":          "192.0.2.1",
		"[2001:db8::1]:443":       "2001:db8::/64", // IPv6 keyed by its /64
		"[::ffff:192.0.2.9]:80":   "192.0.2.9",
		"[fe80::1%eth0]:80":       "fe80::/64",
		"192.0.2.1":               "192.0.2.1",
		"@":                       "",
		"":                        "",
		"not-an-ip:80":            "",
		"X-Forwarded-For-ignored": "",
	}
	for peer, want := range cases {
		got := middleware.RemoteAddrKey(request(peer, "X-Forwarded-For", "203.0.113.5"))
		assert.Equal(t, want, got, "RemoteAddrKey(%q) = %q, want %q", peer, got, want)
	}
}

func TestTrustedClientIPXForwardedFor(t *testing.T) {
	key, err := middleware.TrustedClientIP(middleware.XForwardedFor, "10.0.0.0/8", "192.0.2.7")
	require.NoError(t, err)
	cases := []struct {
		name, peer, xff, want string
	}{
		{"untrusted peer: header ignored", "203.0.113.9:1", "198.51.100.1", "203.0.113.9"},
		{"trusted proxy: client honoured", "10.1.2.3:1", "198.51.100.1", "198.51.100.1"},
		{"single trusted address", "192.0.2.7:1", "198.51.100.1", "198.51.100.1"},
		{"spoofed left part skipped", "10.1.2.3:1", "1.1.1.1, 198.51.100.1", "198.51.100.1"},
		{"trusted hops skipped", "10.1.2.3:1", "1.1.1.1, 198.51.100.1, 10.9.9.9, 10.8.8.8", "198.51.100.1"},
		{"all trusted: leftmost", "10.1.2.3:1", "10.5.5.5, 10.6.6.6", "10.5.5.5"},
		{"no header: the proxy", "10.1.2.3:1", "", "10.1.2.3"},
		{"port and brackets", "10.1.2.3:1", "[2001:db8::5]:4711", "2001:db8::/64"},
		{"garbage where needed", "10.1.2.3:1", "1.1.1.1, garbage", ""},
		{"garbage beyond the client", "10.1.2.3:1", "garbage, 198.51.100.1", "198.51.100.1"},
	}
	for _, c := range cases {
		r := request(c.peer)
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		got := key(r)
		assert.Equal(t, c.want, got, "%s: key = %q, want %q", c.name, got, c.want)
	}
}

func TestTrustedClientIPSeveralHeaderLines(t *testing.T) {
	key, _ := middleware.TrustedClientIP(middleware.XForwardedFor, "10.0.0.0/8")
	r := request("10.0.0.1:1", "X-Forwarded-For", "198.51.100.1", "X-Forwarded-For", "198.51.100.2, 10.0.0.2")
	got := key(r)
	require.Equal(t, "198.51.100.2", got, "key = %q, want 198.51.100.2", got)
}

func TestTrustedClientIPForwarded(t *testing.T) {
	key, err := middleware.TrustedClientIP(middleware.Forwarded, "10.0.0.0/8")
	require.NoError(t, err)
	cases := []struct{ name, peer, fwd, want string }{
		{"untrusted peer", "203.0.113.9:1", "for=198.51.100.1", "203.0.113.9"},
		{"simple", "10.0.0.1:1", "for=198.51.100.1;proto=https", "198.51.100.1"},
		{"quoted v6 with port", "10.0.0.1:1", `for="[2001:db8:cafe::17]:4711"`, "2001:db8:cafe::/64"},
		{"case and spaces", "10.0.0.1:1", `For = "198.51.100.3" ; by=10.0.0.1`, "198.51.100.3"},
		{"chain", "10.0.0.1:1", "for=1.1.1.1, for=198.51.100.4, for=10.2.2.2", "198.51.100.4"},
		{"quoted comma", "10.0.0.1:1", `for=198.51.100.5;x="a,b"`, "198.51.100.5"},
		{"unknown", "10.0.0.1:1", "for=unknown", ""},
		{"obfuscated", "10.0.0.1:1", "for=_hidden", ""},
		{"no for", "10.0.0.1:1", "proto=http", ""},
	}
	for _, c := range cases {
		got := key(request(c.peer, "Forwarded", c.fwd))
		assert.Equal(t, c.want, got, "%s: key = %q, want %q", c.name, got, c.want)
	}
	// X-Forwarded-For is not read when Forwarded is configured.
	got := key(request("10.0.0.1:1", "X-Forwarded-For", "198.51.100.9"))
	assert.Equal(t, "10.0.0.1", got, "X-Forwarded-For read under Forwarded: %q", got)
}

func TestTrustedClientIPRefusesBadCIDR(t *testing.T) {
	for _, bad := range []string{"10.0.0.0/33", "nope", ""} {
		_, err := middleware.TrustedClientIP(middleware.XForwardedFor, bad)
		assert.ErrorIs(t, err, core.ErrInvalid, "%q: err = %v, want core.ErrInvalid", bad, err)
	}
	_, err := middleware.TrustedClientIP(9)
	assert.ErrorIs(t, err, core.ErrInvalid, "bad header: err = %v", err)
}

func TestMappedTrustedPrefix(t *testing.T) {
	key, err := middleware.TrustedClientIP(middleware.XForwardedFor, "::ffff:10.0.0.0/104")
	require.NoError(t, err)
	got := key(request("10.0.0.1:1", "X-Forwarded-For", "198.51.100.1"))
	require.Equal(t, "198.51.100.1", got, "key = %q", got)
}

// TestSpoofedForwardedForThroughMiddleware: a client that is not a trusted
// proxy cannot escape its quota by inventing X-Forwarded-For addresses, and
// a trusted proxy's clients each get their own quota.
func TestSpoofedForwardedForThroughMiddleware(t *testing.T) { checkSpoofedForwardedFor(t, newLocal) }

func checkSpoofedForwardedFor(t *testing.T, newLimiter newLimiterFunc) {
	key, _ := middleware.TrustedClientIP(middleware.XForwardedFor, "10.0.0.0/8")
	h := newHandler(t, middleware.WithLimit("l", newLimiter(t, 2, time.Minute)), middleware.WithKeyFunc(key))
	for i, want := range []int{200, 200, 429, 429} {
		w := get(h, "203.0.113.9:1", "X-Forwarded-For", "198.51.100."+string(rune('1'+i)))
		wantStatus(t, w, want)
	}
	for i := 0; i < 2; i++ {
		wantStatus(t, get(h, "10.0.0.1:1", "X-Forwarded-For", "198.51.100.1"), http.StatusOK)
		wantStatus(t, get(h, "10.0.0.1:1", "X-Forwarded-For", "198.51.100.2"), http.StatusOK)
	}
	wantStatus(t, get(h, "10.0.0.1:1", "X-Forwarded-For", "198.51.100.1"), http.StatusTooManyRequests)
}

// TestHeaderKeyFirstLineWins: with the header on two lines, the first line
// is the key, whole; the second is ignored.
func TestHeaderKeyFirstLineWins(t *testing.T) {
	f := middleware.HeaderKey("x-api-key")
	got := f(request("192.0.2.1:1", "X-API-Key", " k1, k3 ", "X-API-Key", "k2"))
	require.Equal(t, "k1, k3", got, "HeaderKey on two lines = %q, want the first line %q", got, "k1, k3")
}

// TestHashedKey: a hashed key is HashedKeyLen hex digits, the same for the
// same input, different for different ones, never contains the secret, and
// a missing key stays missing.
func TestHashedKey(t *testing.T) {
	f := middleware.HashedKey(middleware.HeaderKey("X-API-Key"))
	a := f(request("192.0.2.1:1", "X-API-Key", "sk_live_secret"))
	require.Len(t, a, middleware.HashedKeyLen, "hashed key %q: want %d hex digits without the secret", a, middleware.HashedKeyLen)
	require.NotContains(t, a, "secret", "hashed key %q: want %d hex digits without the secret", a, middleware.HashedKeyLen)
	// printf sk_live_secret | sha256sum | cut -c1-32
	want := "49ae2cdbc42204d2fc202281424e72bd"
	require.Equal(t, want, a, "hashed key %q, want %q", a, want)
	b := f(request("192.0.2.9:1", "X-API-Key", "sk_live_secret"))
	require.Equal(t, a, b, "same key hashed to %q and %q", a, b)
	c := f(request("192.0.2.1:1", "X-API-Key", "sk_live_other"))
	require.NotEqual(t, a, c, "two keys hashed to %q", c)
	e := f(request("192.0.2.1:1"))
	require.Equal(t, "", e, "missing key hashed to %q, want empty", e)
	long := strings.Repeat("k", core.MaxKeyLen+1)
	l := f(request("192.0.2.1:1", "X-API-Key", long))
	require.Len(t, l, middleware.HashedKeyLen, "over-long key hashed to %q", l)
}
