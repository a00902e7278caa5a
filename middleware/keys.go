package middleware

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// KeyFunc returns the identity key of a request. An empty string means the
// request has no usable key (see WithFallbackKey). A KeyFunc must be safe
// for concurrent use.
type KeyFunc func(r *http.Request) string

// RemoteAddrKey is the KeyFunc of the direct peer's IP address, taken from
// r.RemoteAddr ("ip:port", as net/http sets it): an IPv4 address in its
// canonical text form (IPv4-mapped IPv6 addresses become IPv4; zones are
// dropped), an IPv6 address as its /64 ("2001:db8:1:2::/64"; see
// IPv6Prefix). It returns "" when RemoteAddr holds no IP, as on a Unix
// socket. Behind a proxy every request would share the proxy's key: use
// TrustedClientIP there.
func RemoteAddrKey(r *http.Request) string {
	a, ok := parseHostAddr(r.RemoteAddr)
	if !ok {
		return ""
	}
	return addrKey(a)
}

// IPv6Prefix is the prefix length an IPv6 address is keyed by
// (RemoteAddrKey, TrustedClientIP): one subscriber is routed a /64 or
// more and picks its interface identifier freely (privacy addresses rotate
// on their own), so keyed by the whole address one client would get a
// fresh quota per address. Write your own KeyFunc to key by another length.
const IPv6Prefix = 64

// addrKey is a's key: IPv4 as it is, IPv6 by its IPv6Prefix.
func addrKey(a netip.Addr) string {
	if a.Is4() {
		return a.String()
	}
	return netip.PrefixFrom(a, IPv6Prefix).Masked().String()
}

// HeaderKey returns a KeyFunc that uses the value of the request header
// name (for instance "X-API-Key"), trimmed of surrounding spaces. A missing
// or blank header gives "", a bad key. When the request carries the header
// on several lines, the first line wins, whole (a comma in it is not a
// separator): the others are ignored, so a client sending two keys is
// counted under the first. The value is used as it is: the key is stored
// in the limiter's backend and sent in gossip, so wrap a secret in
// HashedKey.
func HeaderKey(name string) KeyFunc {
	canon := http.CanonicalHeaderKey(name)
	return func(r *http.Request) string {
		return strings.TrimSpace(r.Header.Get(canon))
	}
}

// parseHostAddr reads an IP address written as "ip", "ip:port", "[ipv6]" or
// "[ipv6]:port", the forms of RemoteAddr, X-Forwarded-For entries and
// Forwarded "for" values. The address is unmapped and stripped of any zone.
func parseHostAddr(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return canonical(ap.Addr()), true
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	} else if len(s) > 1 && s[0] == '[' && s[len(s)-1] == ']' {
		s = s[1 : len(s)-1]
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return canonical(a), true
}

func canonical(a netip.Addr) netip.Addr { return a.Unmap().WithZone("") }
