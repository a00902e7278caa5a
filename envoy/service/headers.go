package service

import (
	"strconv"
	"strings"
	"time"
)

// headed is what the headers need of one limited descriptor.
type headed struct {
	name      string
	max       int64
	window    time.Duration
	remaining int64
	reset     time.Duration // until more quota comes back (allowed) or until it passes (denied)
	denied    bool
	blind     bool // a fail-mode decision (store down, nothing counted): says nothing of the quota
	// never: its hits never pass (hits_addend above the limit, or
	// requests_per_unit 0), whatever the wait
	never bool
	quota bool // a quota_mode descriptor decided against a limit (plan.inQuota)
}

// policyField is RateLimit-Policy (draft-ietf-httpapi-ratelimit-headers):
// one item per limited descriptor, "name";q=max;w=seconds (w left out when
// the window is not whole seconds).
func policyField(hs []headed) string {
	items := make([]string, len(hs))
	for i, h := range hs {
		item := sfString(h.name) + ";q=" + strconv.FormatInt(h.max, 10)
		if h.window%time.Second == 0 {
			item += ";w=" + strconv.FormatInt(int64(h.window/time.Second), 10)
		}
		items[i] = item
	}
	return strings.Join(items, ", ")
}

// rateLimitField is RateLimit, naming the most restrictive descriptor as the
// middleware does: when denied, the denying one with the longest wait (r=0,
// t=its wait, at least 1 s); else the one with the fewest remaining (ties:
// the longest reset). A blind (fail-mode) decision is never named, as it
// says nothing of the quota: field is "" when only blind ones are there to
// name. retryAfter, set when one is denied, is the longest wait of the
// denying ones, blind ones included, at least 1 s; it is 0 when the
// request never passes (neverPasses), since no wait lets it through.
func rateLimitField(hs []headed) (field string, retryAfter int64) {
	best := -1
	anyDenied := false
	for _, h := range hs {
		anyDenied = anyDenied || h.denied
	}
	for i, h := range hs {
		if anyDenied != h.denied {
			continue
		}
		if anyDenied {
			retryAfter = max(retryAfter, 1, ceilSeconds(h.reset))
		}
		if h.blind {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := hs[best]
		if anyDenied && h.reset > b.reset ||
			!anyDenied && (h.remaining < b.remaining || h.remaining == b.remaining && h.reset > b.reset) {
			best = i
		}
	}
	if neverPasses(hs) {
		retryAfter = 0
	}
	if best < 0 {
		return "", retryAfter
	}
	h := hs[best]
	r, t := h.remaining, ceilSeconds(h.reset)
	if anyDenied {
		r, t = 0, max(1, t)
	}
	return sfString(h.name) + ";r=" + strconv.FormatInt(r, 10) + ";t=" + strconv.FormatInt(t, 10), retryAfter
}

// neverPasses reports whether the denied request passes at no later
// time: a denying descriptor's hits never fit, or, when it is denied by
// its quota_mode descriptors (every one over), none of them ever fits.
func neverPasses(hs []headed) bool {
	quotas, quotasNever := 0, 0
	for _, h := range hs {
		switch {
		case !h.denied:
		case h.quota:
			quotas++
			if h.never {
				quotasNever++
			}
		case h.never:
			return true
		}
	}
	return quotas > 0 && quotas == quotasNever
}

func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// sfString renders s as an RFC 8941 String: bytes outside printable ASCII
// become '?', '"' and '\' are escaped.
func sfString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c > 0x7e:
			b.WriteByte('?')
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
