package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/envoy/config"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// MaxDescriptors is the most descriptors one request may carry.
const MaxDescriptors = 256

// Options configures a Service. Backend is required.
type Options struct {
	Backend Backend
	// Clock is the time duration_until_reset is computed from; it must be
	// the backend's. nil = core.SystemClock.
	Clock core.Clock
	// ShadowMode answers OK whatever the limits say (every rule in shadow
	// mode), still counting and reporting.
	ShadowMode bool
	// Headers adds RateLimit-Policy and RateLimit (and Retry-After when
	// over the limit, but for a request that never passes, whose hits
	// exceed a denying descriptor's limit or meet requests_per_unit 0) to
	// response_headers_to_add. RateLimit never names a
	// fail-mode decision (core.SourceFailOpen, core.SourceFailClosed),
	// which counted nothing and says nothing of the quota: with no other
	// descriptor to name it is left out, while a fail-closed denial still
	// sets Retry-After.
	Headers bool
	// DefaultAlgorithm counts a descriptor's limit override (which has no
	// algorithm field). Zero value: the sliding window.
	DefaultAlgorithm core.Algorithm
	Metrics          *Metrics     // nil = none
	Logger           *slog.Logger // nil = slog.Default()
}

// Service is the RateLimitService. The zero value is not usable; build one
// with New and give it a configuration with SetConfig before serving (until
// then every descriptor is answered OK, as for an unknown domain).
type Service struct {
	rlsv3.UnimplementedRateLimitServiceServer
	o     Options
	cfg   atomic.Pointer[config.Set]
	clock core.Clock
}

// New returns a Service. A nil Backend fails with an error matching
// core.ErrInvalid.
func New(o Options) (*Service, error) {
	if o.Backend == nil {
		return nil, fmt.Errorf("%w: service needs a backend", core.ErrInvalid)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s := &Service{o: o, clock: o.Clock}
	if s.clock == nil {
		s.clock = core.SystemClock{}
	}
	return s, nil
}

// SetConfig puts c in force for every later request; requests in flight
// finish with the one they started with. The backend keeps the limiters
// of c's rules (Backend.Keep); those of the rules c dropped are released
// once idle.
func (s *Service) SetConfig(c *config.Set) {
	s.o.Backend.Keep(Limits(c))
	s.cfg.Store(c)
}

// Limits returns the limits of c's rules (config.Set.Rules), the ones
// SetConfig has the backend keep; nil for a nil c.
func Limits(c *config.Set) []core.Limit {
	if c == nil {
		return nil
	}
	var limits []core.Limit
	for _, dr := range c.Rules() {
		limits = append(limits, dr.Rule.RateLimit.Limit())
	}
	return limits
}

// Config returns the configuration in force (nil before SetConfig).
func (s *Service) Config() *config.Set { return s.cfg.Load() }

// inQuota reports whether p is a quota_mode descriptor decided against a
// limit (not replaced, overridden or unlimited): the request is denied
// when every such descriptor of it is over its limit.
func (p plan) inQuota() bool {
	return p.rule != nil && p.rule.QuotaMode && !p.overridden && !p.replaced && p.rl != nil && !p.rl.Unlimited
}

// plan is one descriptor's way through a request.
type plan struct {
	rule *config.Rule
	rl   *config.RateLimit
	id   string
	hits int64
	// check: decided without counting (Peek): the descriptor's
	// hits_addend is 0, or an earlier descriptor denied the request
	check  bool
	metric string
	// replaced: another matched rule replaces this one's rate limit.
	replaced bool
	// overridden: the descriptor's own limit override is enforced, as
	// envoyproxy/ratelimit enforces it, without the rule's shadow_mode,
	// quota_mode or replaces
	overridden bool
	// charge: the rule's hits are costs already incurred (config.Rule.Charge)
	charge bool
}

func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

// ShouldRateLimit implements rlsv3.RateLimitServiceServer (see the package
// doc).
func (s *Service) ShouldRateLimit(ctx context.Context, req *rlsv3.RateLimitRequest) (*rlsv3.RateLimitResponse, error) {
	cfg := s.cfg.Load()
	dom := cfg.Domain(req.GetDomain())
	domLabel := "unknown"
	if dom != nil {
		domLabel = dom.Name
	}
	plans, err := s.plan(dom, req)
	if err != nil {
		s.countRequest(domLabel, "invalid")
		return nil, err
	}
	resp := &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_OK, Statuses: make([]*rlsv3.RateLimitResponse_DescriptorStatus, len(plans))}
	var hs []headed
	var quota []*structpb.Value
	quotas := 0 // the request's quota_mode descriptors decided against a limit (plan.inQuota)
	for _, p := range plans {
		if p.inQuota() {
			quotas++
		}
	}
	var quotaHeads []int // hs indexes of those over their limit
	for i, p := range plans {
		// once the request is denied, nothing more of it is counted but
		// charges, costs already incurred
		p.check = p.check || resp.OverallCode == rlsv3.RateLimitResponse_OVER_LIMIT && !s.o.ShadowMode && !p.charge
		st, h, result, err := s.decide(ctx, p)
		if err != nil && errors.Is(err, context.Canceled) {
			// the caller (Envoy) gave up on the call: no outage
			s.countRequest(domLabel, "canceled")
			s.o.Logger.Debug("caller gone", "domain", req.GetDomain(), "descriptor", i, "err", err)
			return nil, status.Errorf(codes.Canceled, "descriptor %d: %v", i, err)
		}
		if err != nil {
			s.countRequest(domLabel, "error")
			s.o.Logger.Error("decision failed", "domain", req.GetDomain(), "descriptor", i, "err", err)
			code := codes.Unavailable
			if errors.Is(err, core.ErrInvalid) {
				code = codes.InvalidArgument
			}
			return nil, status.Errorf(code, "descriptor %d: %v", i, err)
		}
		if p.inQuota() && st.Code == rlsv3.RateLimitResponse_OVER_LIMIT {
			// Quota mode, as envoyproxy/ratelimit decides it: the
			// request is denied only when every quota is spent, known
			// once the last is decided: the descriptors after it are
			// then checked, not counted
			quota = append(quota, structpb.NewNumberValue(float64(i)))
			result = "quota_over_limit"
			if h != nil {
				h.denied = false
				quotaHeads = append(quotaHeads, len(hs))
			}
			if len(quota) == quotas {
				resp.OverallCode = rlsv3.RateLimitResponse_OVER_LIMIT
			}
		} else if st.Code == rlsv3.RateLimitResponse_OVER_LIMIT {
			resp.OverallCode = rlsv3.RateLimitResponse_OVER_LIMIT
		}
		resp.Statuses[i] = st
		if h != nil {
			h.quota = p.inQuota()
			hs = append(hs, *h)
		}
		if s.o.Metrics != nil {
			s.o.Metrics.decisions.WithLabelValues(domLabel, p.metric, result).Inc()
		}
	}
	if quotas > 0 && len(quota) == quotas {
		for _, j := range quotaHeads {
			hs[j].denied = true
		}
	}
	if len(quota) > 0 {
		resp.DynamicMetadata = &structpb.Struct{Fields: map[string]*structpb.Value{
			"quotaModeViolations": structpb.NewListValue(&structpb.ListValue{Values: quota}),
		}}
	}
	if s.o.ShadowMode && resp.OverallCode == rlsv3.RateLimitResponse_OVER_LIMIT {
		resp.OverallCode = rlsv3.RateLimitResponse_OK
		for _, st := range resp.Statuses {
			st.Code = rlsv3.RateLimitResponse_OK
		}
		for i := range hs {
			hs[i].denied = false
		}
	}
	if s.o.Headers && len(hs) > 0 {
		field, retry := rateLimitField(hs)
		resp.ResponseHeadersToAdd = append(resp.ResponseHeadersToAdd,
			&corev3.HeaderValue{Key: "RateLimit-Policy", Value: policyField(hs)})
		if field != "" {
			resp.ResponseHeadersToAdd = append(resp.ResponseHeadersToAdd,
				&corev3.HeaderValue{Key: "RateLimit", Value: field})
		}
		if retry > 0 {
			resp.ResponseHeadersToAdd = append(resp.ResponseHeadersToAdd,
				&corev3.HeaderValue{Key: "Retry-After", Value: strconv.FormatInt(retry, 10)})
		}
	}
	code := "ok"
	if resp.OverallCode == rlsv3.RateLimitResponse_OVER_LIMIT {
		code = "over_limit"
	}
	s.countRequest(domLabel, code)
	return resp, nil
}

func (s *Service) countRequest(domain, code string) {
	if s.o.Metrics != nil {
		s.o.Metrics.requests.WithLabelValues(domain, code).Inc()
	}
}

// plan validates the request and finds each descriptor's rule, applying
// replaces. Errors are InvalidArgument.
func (s *Service) plan(dom *config.Domain, req *rlsv3.RateLimitRequest) ([]plan, error) {
	if req.GetDomain() == "" {
		return nil, invalid("rate limit domain must not be empty")
	}
	descs := req.GetDescriptors()
	if len(descs) == 0 {
		return nil, invalid("rate limit descriptor list must not be empty")
	}
	if len(descs) > MaxDescriptors {
		return nil, invalid("%d descriptors: at most %d per request", len(descs), MaxDescriptors)
	}
	plans := make([]plan, len(descs))
	replaced := map[string]bool{}
	for i, d := range descs {
		entries := d.GetEntries()
		if len(entries) == 0 {
			return nil, invalid("descriptor %d has no entries", i)
		}
		es := make([]config.Entry, len(entries))
		for j, e := range entries {
			if e.GetKey() == "" {
				return nil, invalid("descriptor %d entry %d has an empty key", i, j)
			}
			es[j] = config.Entry{Key: e.GetKey(), Value: e.GetValue()}
		}
		if d.GetIsNegativeHits() {
			return nil, invalid("descriptor %d: is_negative_hits is not supported", i)
		}
		p := &plans[i]
		p.metric = "(none)"
		var key []config.Entry
		p.rule, key = dom.MatchKey(es)
		if key == nil {
			key = es
		}
		if p.rule != nil {
			p.rl, p.charge = p.rule.RateLimit, p.rule.Charge
			p.metric = p.rule.Path
			if p.rl.Name != "" {
				p.metric = p.rl.Name
			}
			if p.rule.DetailedMetric {
				p.metric += "|" + detail(key)
			}
		}
		if o := d.GetLimit(); o != nil {
			rl, err := s.override(o, p.rl)
			if err != nil {
				return nil, invalid("descriptor %d: %v", i, err)
			}
			p.rl, p.overridden = rl, true
			if p.rule == nil {
				p.metric = "(override)"
			}
		} else if p.rule != nil {
			for _, r := range p.rule.Replaces {
				replaced[r] = true
			}
		}
		p.hits = int64(req.GetHitsAddend())
		if h := d.GetHitsAddend(); h != nil {
			p.hits = int64(min(h.GetValue(), math.MaxInt64))
			p.check = p.hits == 0
		}
		if p.hits == 0 {
			p.hits = 1
		}
		if p.rl != nil && !p.rl.Unlimited {
			p.id = identity(req.GetDomain(), key, p.rl.Limit().Window)
			if err := core.ValidateKey(p.id); err != nil {
				return nil, invalid("descriptor %d: its counter's key (domain, keys, values, window) takes %d bytes, at most %d allowed", i, len(p.id), core.MaxKeyLen)
			}
		}
	}
	for i := range plans {
		if rl := plans[i].rl; rl != nil && rl.Name != "" && replaced[rl.Name] && !plans[i].overridden {
			plans[i].replaced = true
		}
	}
	return plans, nil
}

// identity is the counter's key: domain, every entry's key and value, each
// length-prefixed so distinct descriptors never share a key, and the window.
func identity(domain string, es []config.Entry, window time.Duration) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(domain)))
	b.WriteByte(':')
	b.WriteString(domain)
	for _, e := range es {
		b.WriteByte('|')
		b.WriteString(strconv.Itoa(len(e.Key)))
		b.WriteByte(':')
		b.WriteString(e.Key)
		b.WriteString(strconv.Itoa(len(e.Value)))
		b.WriteByte(':')
		b.WriteString(e.Value)
	}
	b.WriteString("|w=")
	b.WriteString(strconv.FormatInt(window.Milliseconds(), 10))
	return b.String()
}

// detail is a detailed_metric rule's value label: key=value pairs.
func detail(es []config.Entry) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Key + "=" + e.Value
	}
	return strings.Join(parts, ",")
}

var overrideUnits = map[typev3.RateLimitUnit]config.Unit{
	typev3.RateLimitUnit_SECOND: config.Second, typev3.RateLimitUnit_MINUTE: config.Minute,
	typev3.RateLimitUnit_HOUR: config.Hour, typev3.RateLimitUnit_DAY: config.Day,
	typev3.RateLimitUnit_MONTH: config.Month,
	typev3.RateLimitUnit_YEAR:  config.Year,
}

// override turns a descriptor's limit override into a RateLimit, keeping the
// rule's name and algorithm when there is a rule.
func (s *Service) override(o *commonv3.RateLimitDescriptor_RateLimitOverride, rule *config.RateLimit) (*config.RateLimit, error) {
	u, ok := overrideUnits[o.GetUnit()]
	if !ok {
		return nil, fmt.Errorf("limit override has unit %s", o.GetUnit())
	}
	rl := &config.RateLimit{Unit: u, Multiplier: 1, RequestsPerUnit: o.GetRequestsPerUnit(), Algorithm: s.o.DefaultAlgorithm}
	if m := o.GetUnitMultiplier(); m != nil && m.GetValue() > 0 {
		rl.Multiplier = m.GetValue()
	}
	if rule != nil {
		rl.Name, rl.Algorithm = rule.Name, rule.Algorithm
	}
	lim := rl.Limit()
	if rl.RequestsPerUnit == 0 {
		lim.Max = 1 // denies every request; its window is the denials' wait
	}
	if err := lim.Validate(); err != nil {
		return nil, fmt.Errorf("limit override cannot be enforced: %w", err)
	}
	return rl, nil
}

var unitsPB = map[config.Unit]rlsv3.RateLimitResponse_RateLimit_Unit{
	config.Second: rlsv3.RateLimitResponse_RateLimit_SECOND, config.Minute: rlsv3.RateLimitResponse_RateLimit_MINUTE,
	config.Hour: rlsv3.RateLimitResponse_RateLimit_HOUR, config.Day: rlsv3.RateLimitResponse_RateLimit_DAY,
	config.Week: rlsv3.RateLimitResponse_RateLimit_WEEK, config.Month: rlsv3.RateLimitResponse_RateLimit_MONTH,
	config.Year: rlsv3.RateLimitResponse_RateLimit_YEAR,
}

func currentLimit(rl *config.RateLimit) *rlsv3.RateLimitResponse_RateLimit {
	cl := &rlsv3.RateLimitResponse_RateLimit{Name: rl.Name, RequestsPerUnit: rl.RequestsPerUnit, Unit: unitsPB[rl.Unit]}
	if rl.Multiplier > 1 {
		cl.UnitMultiplier = wrapperspb.UInt32(rl.Multiplier)
	}
	return cl
}

// ask decides p's hits at now on lim's limiter: counted (AllowN; a charge
// rule's hits by charge, which counts what fits of them), or checked
// without counting: PeekN of the hits where the limiter has it
// (core.PeekerN: the local, Redis and budget backends), whose wait is
// the time the hits fit; else Peek of one unit, the hits denied when they
// pass what is left, with the time until quota starts to come back (early
// for a sliding window, which may need more of the window to fade). The limiter goes back to the backend even when the call
// panics (a Redis client hook's: the server's interceptor answers that
// call), so a recovered panic leaks no reference that would keep the
// limiter from ever being released.
func (s *Service) ask(ctx context.Context, p plan, lim core.Limit, now time.Time) (core.Decision, error) {
	l, done, err := s.o.Backend.Acquire(lim)
	if err != nil {
		return core.Decision{}, err
	}
	defer done()
	if !p.check && p.charge {
		return charge(ctx, l, p, lim, now)
	}
	if !p.check {
		return l.AllowN(ctx, p.id, now, p.hits)
	}
	return peek(ctx, l, p, lim, now)
}

// peek decides p's hits at now on l without counting (see ask).
func peek(ctx context.Context, l core.Limiter, p plan, lim core.Limit, now time.Time) (core.Decision, error) {
	if pn, ok := l.(core.PeekerN); ok && p.hits > 1 {
		return pn.PeekN(ctx, p.id, now, p.hits)
	}
	d, err := l.Peek(ctx, p.id, now)
	if d.Allowed && p.hits > 1 && d.Remaining < p.hits && d.Source != core.SourceFailOpen {
		// Peek decides one unit: p.hits do not fit, at least until quota
		// starts to come back
		d.Allowed, d.RetryAfter = false, untilMore(d, lim, now)
	}
	return d, err
}

// decide makes one descriptor's decision. An error means no decision: the
// backend could not build a limiter or refused the input.
func (s *Service) decide(ctx context.Context, p plan) (*rlsv3.RateLimitResponse_DescriptorStatus, *headed, string, error) {
	ok := rlsv3.RateLimitResponse_OK
	over := rlsv3.RateLimitResponse_OVER_LIMIT
	switch {
	case p.replaced:
		return &rlsv3.RateLimitResponse_DescriptorStatus{Code: ok}, nil, "replaced", nil
	case p.rl == nil:
		return &rlsv3.RateLimitResponse_DescriptorStatus{Code: ok}, nil, "no_rule", nil
	case p.rl.Unlimited:
		return &rlsv3.RateLimitResponse_DescriptorStatus{Code: ok, LimitRemaining: math.MaxUint32}, nil, "unlimited", nil
	}
	lim := p.rl.Limit()
	name := p.metric
	if p.rl.Name != "" {
		name = p.rl.Name
	}
	h := &headed{name: name, max: lim.Max, window: lim.Window}
	st := &rlsv3.RateLimitResponse_DescriptorStatus{CurrentLimit: currentLimit(p.rl)}
	var d core.Decision
	h.never = lim.Max == 0 || p.hits > lim.Max
	if lim.Max == 0 || h.never && (!p.charge || p.check) {
		// Never passes: requests_per_unit 0, or more hits than the limit
		// (a charge counts what fits of them, below).
		d = core.Decision{Limit: lim.Max, RetryAfter: lim.Window}
	} else {
		now := s.clock.Now()
		var err error
		d, err = s.ask(ctx, p, lim, now)
		if err != nil && !errors.Is(err, core.ErrUnavailable) {
			return nil, nil, "", err // no decision: among them a caller gone (context.Canceled)
		}
		if err != nil {
			s.o.Logger.Warn("store unavailable; fail-mode decision", "source", d.Source.String(), "err", err)
		}
		if d.Allowed {
			h.reset = untilMore(d, lim, now)
		}
		h.blind = d.Source == core.SourceFailOpen || d.Source == core.SourceFailClosed
	}
	st.LimitRemaining = uint32(min(d.Remaining, math.MaxUint32))
	if d.Allowed && d.Source == core.SourceFailOpen {
		// counted nothing: no limit or wait to report, so Envoy's
		// X-RateLimit-* headers (built from the statuses that have a
		// current_limit) do not say the quota is spent
		return &rlsv3.RateLimitResponse_DescriptorStatus{Code: ok}, h, "fail_open", nil
	}
	if d.Allowed {
		st.Code = ok
		st.DurationUntilReset = durationpb.New(h.reset)
		h.remaining = d.Remaining
		return st, h, "ok", nil
	}
	h.denied, h.reset = true, d.RetryAfter
	st.DurationUntilReset = durationpb.New(d.RetryAfter)
	if p.rule != nil && p.rule.ShadowMode && !p.overridden {
		st.Code, st.LimitRemaining = ok, 0
		h.denied = false
		return st, h, "shadow_over_limit", nil
	}
	st.Code = over
	if d.Source == core.SourceFailClosed {
		return st, h, "fail_closed", nil
	}
	return st, h, "over_limit", nil
}

// untilMore is how long after an allowed decision more quota comes back,
// the earliest a client that spent its last unit is admitted again. For a
// fixed window it is the window's end. A sliding window's count weighs in
// full at the next window's start and begins to fade 1 ms into it, so it
// is the time to that point, capped at the window (at the very start of a
// window that millisecond would round the RateLimit field's t up past w),
// the middleware's RateLimit t. ResetAfter for the other algorithms.
func untilMore(d core.Decision, lim core.Limit, now time.Time) time.Duration {
	w := lim.WindowMillis()
	switch lim.Algorithm {
	case core.FixedWindow:
		return core.MillisDuration(w - core.Millis(now)%w)
	case core.SlidingWindow:
		return core.MillisDuration(min(w-core.Millis(now)%w+1, w))
	}
	return d.ResetAfter
}
