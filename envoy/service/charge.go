package service

import (
	"context"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// chargeCalls bounds the AllowN calls of one charge.
const chargeCalls = 8

// charge counts p's hits, costs already incurred (config.Rule.Charge), at
// now on l. When they fit it is AllowN of them. When they do not, it
// counts as many as fit, the quota left (at most lim.Max), so the cost
// spends what it can and the next requests wait for quota to come back,
// and denies: Remaining is what is left after the charge, RetryAfter the
// time the hits fit (peek), or the window for hits above the limit,
// which never fit. What is left is what each denial reports; when a
// count of it is denied too (another request spent some meanwhile, or
// the backend's Remaining counts units it keeps back, as the budget
// backend's free credit), charge tries again with what the new denial
// reports, or with an eighth fewer (at least one) when that is no fewer,
// chargeCalls calls in all. A store failure after a count keeps what was counted.
func charge(ctx context.Context, l core.Limiter, p plan, lim core.Limit, now time.Time) (core.Decision, error) {
	n := min(p.hits, lim.Max)
	var first, last core.Decision // the first answer; the last that counted
	counted := int64(0)
	for i := range chargeCalls {
		d, err := l.AllowN(ctx, p.id, now, n)
		if err != nil && counted == 0 {
			return d, err
		}
		if err != nil {
			break
		}
		if i == 0 {
			first = d
		}
		switch {
		case d.Allowed && counted == 0 && n == p.hits:
			return d, nil // they fit
		case d.Allowed:
			counted += n
			last = d
			n = min(p.hits-counted, d.Remaining)
		case d.Remaining < n:
			n = d.Remaining
		default:
			n -= max(1, n/8) // this Remaining overstates what a count admits
		}
		if n <= 0 {
			break
		}
	}
	if counted == 0 {
		return denied(first, p, lim), nil
	}
	if counted == p.hits {
		return last, nil // they fit after all, in parts
	}
	d := last
	if p.hits <= lim.Max {
		// an error after the charge (the store gone, the caller gone)
		// takes nothing back: the wait is then until quota comes back
		d.RetryAfter = untilMore(d, lim, now)
		if pd, err := peek(ctx, l, p, lim, now); err == nil && !pd.Allowed && pd.RetryAfter > 0 {
			d.RetryAfter = pd.RetryAfter
		}
	}
	return denied(d, p, lim), nil
}

// denied is d, a denial of p's hits, with the window as its wait when the
// hits exceed the limit, which no wait lets through.
func denied(d core.Decision, p plan, lim core.Limit) core.Decision {
	d.Allowed = false
	if p.hits > lim.Max {
		d.RetryAfter = lim.Window
	}
	return d
}
