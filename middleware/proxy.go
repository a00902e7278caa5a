package middleware

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"

	"github.com/edgelimit/edgelimit/core"
)

// ProxyHeader names the header in which trusted proxies record the address
// they received a request from. The zero value is XForwardedFor.
type ProxyHeader uint8

const (
	// XForwardedFor is "X-Forwarded-For: client, proxy1, proxy2".
	XForwardedFor ProxyHeader = iota
	// Forwarded is RFC 7239's "Forwarded: for=client, for=proxy1".
	Forwarded
)

// TrustedClientIP returns a KeyFunc giving the client's IP address when
// requests come through proxies (an IPv6 address as its /64, as
// RemoteAddrKey). trusted lists the proxies, as CIDR
// prefixes ("10.0.0.0/8") or single addresses ("192.0.2.7").
//
// The header is believed only as far as trusted hops vouch for it: starting
// from the direct peer (RemoteAddr), while the current address is a trusted
// proxy, the next address is taken from the right end of the header's list.
// The first address that is not trusted is the key. A client can therefore
// write anything in the header: it is read only to the left of addresses a
// trusted proxy appended, so the key is still the address the first trusted
// proxy saw. With a direct peer that is not trusted the header is ignored.
// When every address is trusted, the leftmost one is the key. An entry that
// holds no IP address (Forwarded's "unknown" or an obfuscated "_name") where
// the walk needs one gives "", a bad key. A Forwarded line that ends inside
// a quoted-string is read as split at every comma, so a quote a client
// opens and never closes cannot swallow the elements the proxies append to
// its line (which would let the client's own "for" pass for theirs).
//
// Only the header h is read: configure the one your proxies write, since a
// client can send the other one untouched through them. Several header
// lines count as one list, in order. A malformed trusted entry makes
// TrustedClientIP return an error matching core.ErrInvalid.
func TrustedClientIP(h ProxyHeader, trusted ...string) (KeyFunc, error) {
	prefixes, err := parseTrusted(trusted)
	if err != nil {
		return nil, err
	}
	if h != XForwardedFor && h != Forwarded {
		return nil, fmt.Errorf("%w: proxy header %d", core.ErrInvalid, h)
	}
	return func(r *http.Request) string {
		return clientIP(r, h, prefixes)
	}, nil
}

// clientIP walks the hop list from the right while hops are trusted.
func clientIP(r *http.Request, h ProxyHeader, trusted []netip.Prefix) string {
	addr, ok := parseHostAddr(r.RemoteAddr)
	if !ok {
		return ""
	}
	if !isTrusted(addr, trusted) {
		return addrKey(addr)
	}
	hops := hopList(r, h)
	for i := len(hops) - 1; i >= 0 && isTrusted(addr, trusted); i-- {
		if addr, ok = parseHostAddr(hops[i]); !ok {
			return ""
		}
	}
	return addrKey(addr)
}

// hopList returns the addresses recorded in header h, leftmost (farthest
// from us) first.
func hopList(r *http.Request, h ProxyHeader) []string {
	if h == Forwarded {
		return forwardedFor(r.Header.Values("Forwarded"))
	}
	var hops []string
	for _, line := range r.Header.Values("X-Forwarded-For") {
		for _, e := range strings.Split(line, ",") {
			hops = append(hops, strings.TrimSpace(e))
		}
	}
	return hops
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseTrusted reads CIDR prefixes and single addresses.
func parseTrusted(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, unmapPrefix(p.Masked()))
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("%w: trusted proxy %q is neither a CIDR prefix nor an IP address", core.ErrInvalid, s)
		}
		a = canonical(a)
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// unmapPrefix turns ::ffff:a.b.c.d/n (n ≥ 96) into a.b.c.d/(n−96), since the
// addresses it is matched against are unmapped.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	a := p.Addr()
	if a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p
}
