package middleware_test

import (
	"net/netip"
	"testing"

	"github.com/edgelimit/edgelimit/middleware"
	"github.com/stretchr/testify/require"
)

// FuzzTrustedClientIP: whatever the headers say, the key is "", an IPv4
// address in canonical form or an IPv6 /64 prefix, and never panics.
func FuzzTrustedClientIP(f *testing.F) {
	f.Add("10.0.0.1:1", "1.1.1.1, 198.51.100.1", `for="[2001:db8::1]:80";proto=http, for=10.0.0.2`)
	f.Add("10.0.0.1:1", `"`, `for="\`)
	f.Add("[::1]:1", ",,,", ";;;for=")
	f.Add("10.0.0.1:1", "", `for=1.1.1.1;x=", for=198.51.100.7`)
	xff, _ := middleware.TrustedClientIP(middleware.XForwardedFor, "10.0.0.0/8", "::1")
	fwd, _ := middleware.TrustedClientIP(middleware.Forwarded, "10.0.0.0/8", "::1")
	f.Fuzz(func(t *testing.T, peer, xffValue, fwdValue string) {
		r := request(peer, "X-Forwarded-For", xffValue, "Forwarded", fwdValue)
		for _, k := range []string{xff(r), fwd(r)} {
			if k == "" {
				continue
			}
			if p, err := netip.ParsePrefix(k); err == nil {
				require.True(t, p.Addr().Is6() && p.Bits() == middleware.IPv6Prefix, "key %q: a prefix is an IPv6 /%d", k, middleware.IPv6Prefix)
				require.Equal(t, k, p.Masked().String(), "key %q is not a canonical masked prefix", k)
				continue
			}
			a, err := netip.ParseAddr(k)
			require.NoError(t, err, "key %q is neither an IP address nor an IPv6 prefix", k)
			require.True(t, a.Is4(), "key %q: an address key is IPv4", k)
			require.Equal(t, k, a.String(), "key %q is not a canonical IP address", k)
		}
	})
}
