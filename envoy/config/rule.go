package config

import (
	"math"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// Unit is a rate limit unit of envoyproxy/ratelimit's format. The zero value
// is no unit (an unlimited rule).
type Unit uint8

// The units, with envoyproxy/ratelimit's lengths for week, month and year.
const (
	UnitNone Unit = iota
	Second
	Minute
	Hour
	Day
	Week
	Month
	Year
)

var unitNames = map[string]Unit{
	"second": Second, "minute": Minute, "hour": Hour, "day": Day,
	"week": Week, "month": Month, "year": Year,
}

// Duration is the unit's length; 0 for UnitNone.
func (u Unit) Duration() time.Duration {
	switch u {
	case Second:
		return time.Second
	case Minute:
		return time.Minute
	case Hour:
		return time.Hour
	case Day:
		return 24 * time.Hour
	case Week:
		return 7 * 24 * time.Hour
	case Month:
		return 30 * 24 * time.Hour
	case Year:
		return 365 * 24 * time.Hour
	}
	return 0
}

// String is the unit's name in the YAML format; "" for UnitNone.
func (u Unit) String() string {
	for n, v := range unitNames {
		if v == u {
			return n
		}
	}
	return ""
}

// RateLimit is a rule's rate_limit. The zero value is invalid.
type RateLimit struct {
	Name            string // name, for replaces and reporting; may be ""
	Unit            Unit
	Multiplier      uint32 // unit_multiplier, at least 1
	RequestsPerUnit uint32 // 0 denies every request
	Unlimited       bool   // never limited; Unit and RequestsPerUnit are zero
	Algorithm       core.Algorithm
}

// Limit is the core.Limit the rule enforces: RequestsPerUnit per
// Multiplier × Unit. A Multiplier × Unit past the largest time.Duration
// (292 years) gives that largest Duration, which core.Limit.Validate
// refuses with core.ErrBadWindow like any window over core.MaxWindow,
// rather than the product wrapped around. Meaningless for an unlimited
// rule.
func (r RateLimit) Limit() core.Limit {
	return core.Limit{
		Max:       int64(r.RequestsPerUnit),
		Window:    window(r.Multiplier, r.Unit),
		Algorithm: r.Algorithm,
	}
}

// window is m units, or the largest time.Duration if that is longer.
func window(m uint32, u Unit) time.Duration {
	d := u.Duration()
	if d > 0 && int64(m) > math.MaxInt64/int64(d) {
		return math.MaxInt64
	}
	return time.Duration(m) * d
}

// Rule is one descriptor rule of a domain. The zero value matches nothing.
type Rule struct {
	Key        string
	Value      string // "" matches any value of Key; a trailing '*' is a prefix wildcard
	RateLimit  *RateLimit
	ShadowMode bool
	QuotaMode  bool // over the limit: denies only with every quota of the request spent; reported in dynamic metadata
	// Charge: the descriptor's hits are costs already incurred (Envoy's
	// apply_on_stream_done sends them once the response is done): hits
	// that do not fit count what is left of the quota, and a denial
	// earlier in the request does not keep them from being counted.
	Charge         bool
	DetailedMetric bool     // metrics name the request's values (value_to_metric too)
	ShareThreshold bool     // a wildcard's values share one counter
	Replaces       []string // names of rate limits this rule overrides
	Path           string   // the rule's YAML path, e.g. "descriptors[2].descriptors[0]"
	Line           int      // the rule's line in its file

	children *level
}

// level is the rules at one depth under one parent: by key and value for exact
// values, by key for key-only rules, and the wildcards longest prefix first.
type level struct {
	exact     map[Entry]*Rule
	keyOnly   map[string]*Rule
	wildcards []*Rule
}

// Domain is the rules of one domain, from one file. The zero value has no
// rules.
type Domain struct {
	Name string
	File string
	top  *level
}
