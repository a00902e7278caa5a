package middleware

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// policyField renders the RateLimit-Policy value: one item per limit.
func policyField(limits []namedLimit) string {
	items := make([]string, len(limits))
	for i, l := range limits {
		lim := l.limiter.Limit()
		item := sfString(l.name) + ";q=" + sfInt(lim.Max)
		if lim.Window%time.Second == 0 {
			item += ";w=" + sfInt(int64(lim.Window/time.Second))
		}
		items[i] = item
	}
	return strings.Join(items, ", ")
}

// writeDecided sets RateLimit (and, if asked, the legacy fields) from the
// decision d of the limit l, and Retry-After when denied.
func writeDecided(h http.Header, l namedLimit, d core.Decision, denied, legacy bool) {
	name := l.name
	r, t := d.Remaining, ceilSeconds(moreQuotaAfter(d, l.limiter.Limit()))
	if denied {
		r, t = 0, retryAfterSeconds(d)
		h.Set("Retry-After", strconv.FormatInt(t, 10))
	}
	h.Set("RateLimit", sfString(name)+";r="+sfInt(r)+";t="+sfInt(t))
	if legacy {
		h.Set("X-RateLimit-Limit", strconv.FormatInt(d.Limit, 10))
		h.Set("X-RateLimit-Remaining", strconv.FormatInt(r, 10))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(t, 10))
	}
}

// moreQuotaAfter is how long until more quota than d.Remaining is
// available at the latest, the draft's "t" for an allowed request, from the
// decision d of limit l, whose window is w. It is d.ResetAfter (all counts
// gone), at most w. A sliding window's ResetAfter runs up to 2w, while the
// previous window's weight still fades; the current window's count begins
// to fade one millisecond into the next window, so t is the time to that
// point, ResetAfter − w + 1 ms, at most w (at the very start of a window
// that millisecond would round t up past w). It is an upper bound, exact
// for a fixed window: a sliding window's previous window, while its
// weight fades, gives quota back sooner (the Decision does not carry the
// counts to tell when), and so do the log's oldest stamps and the bucket's
// refill. The other algorithms' ResetAfter passes w only when the request
// is stamped behind the state (a clock behind the one that wrote it), by
// that lag: t is then w.
func moreQuotaAfter(d core.Decision, l core.Limit) time.Duration {
	w := l.Window
	if d.ResetAfter > w && l.Algorithm == core.SlidingWindow {
		return min(d.ResetAfter-w+time.Millisecond, w)
	}
	return min(d.ResetAfter, w)
}

// retryAfterSeconds is RetryAfter in whole seconds rounded up, at least 1 so
// a denied client never retries at once.
func retryAfterSeconds(d core.Decision) int64 {
	return max(1, ceilSeconds(d.RetryAfter))
}

// ceilSeconds is d in seconds rounded up; 0 for d ≤ 0.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	s := int64(d / time.Second) // no d + 1s − 1: it wraps for d near the largest Duration
	if d%time.Second != 0 {
		s++
	}
	return s
}

// maxSFInt is the largest RFC 8941 Integer (15 digits).
const maxSFInt = 999_999_999_999_999

// sfInt renders v as an RFC 8941 Integer, clamped to its range.
func sfInt(v int64) string {
	return strconv.FormatInt(min(max(v, -maxSFInt), maxSFInt), 10)
}

// sfString renders s (printable ASCII, see checkName) as an RFC 8941 String.
func sfString(s string) string {
	if !strings.ContainsAny(s, `"\`) {
		return `"` + s + `"`
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}
