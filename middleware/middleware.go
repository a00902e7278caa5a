package middleware

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/edgelimit/edgelimit/core"
)

// errNoAnswer is the cause reported if a decision comes back empty.
var errNoAnswer = errors.New("no limit answered")

// Middleware rate-limits the requests of the handlers it wraps. Build it
// with New; it is safe for concurrent use, and one Middleware may wrap many
// handlers, which then share its limits and quotas. The zero value is not
// usable.
type Middleware struct {
	cfg    config
	policy string // the RateLimit-Policy value, fixed at New
	bound  bool   // every limiter is DeadlineBound: decide on the request's goroutine
	bounds []bool // limit by limit, whether its limiter is DeadlineBound
	plan   []step // the calls of a decision, in order
	// peekPastBlind (FailAsLimiter): a blind denial does not end the
	// decision before the limits not asked yet are peeked at
	peekPastBlind bool
}

// New builds a Middleware from options. At least one WithLimit is required;
// a missing limit or a bad option gives an error matching core.ErrInvalid.
func New(opts ...Option) (*Middleware, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if len(cfg.limits) == 0 {
		return nil, fmt.Errorf("%w: middleware needs at least one WithLimit", core.ErrInvalid)
	}
	bs := bounds(cfg.limits)
	return &Middleware{cfg: cfg, policy: policyField(cfg.limits), bound: all(bs), bounds: bs,
		plan: plan(len(cfg.limits), cfg.peekFirst), peekPastBlind: cfg.failMode == FailAsLimiter}, nil
}

// Wrap returns a handler that rate-limits each request and passes the ones
// allowed (or let through by FailOpen) to next.
func (m *Middleware) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.serve(w, r, next)
	})
}

func (m *Middleware) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	h := w.Header()
	h.Set("RateLimit-Policy", m.policy)
	key, err := m.key(r)
	if err != nil {
		m.cfg.badKey(w, r, err)
		return
	}
	o, err := m.decideWithin(r.Context(), key, m.cfg.clock.Now())
	i := o.pick()
	if err == nil && i < 0 { // no limit decided: under FailOpen, each failed
		err = o.failed
		if err == nil { // cannot happen
			err = &core.UnavailableError{Op: "middleware: rate-limit decision", Err: errNoAnswer}
		}
	}
	if err != nil {
		m.undecided(w, r, next, err)
		return
	}
	d := o.ds[i]
	if o.failed != nil {
		m.report(r, o.failed)
		if m.cfg.failMode == FailClosed {
			unavailable(w)
			return
		}
	}
	if o.denied && blind(d) { // the limiter's own fail-closed denial stands
		h.Set("Retry-After", strconv.FormatInt(retryAfterSeconds(d), 10))
		unavailable(w)
		return
	}
	if !blind(d) {
		writeDecided(h, m.cfg.limits[i], d, o.denied, m.cfg.legacy)
	}
	if o.denied {
		m.cfg.denied.ServeHTTP(w, r)
		return
	}
	next.ServeHTTP(w, r)
}

// key extracts the request's key, replacing a bad one by the fallback key
// when configured; otherwise a bad key gives core.ValidateKey's error.
func (m *Middleware) key(r *http.Request) (string, error) {
	k := m.cfg.key(r)
	err := core.ValidateKey(k)
	if err != nil && m.cfg.fallback != "" {
		return m.cfg.fallback, nil
	}
	return k, err
}

// undecided answers a request that got no decision at all: served under
// FailOpen, 503 otherwise.
func (m *Middleware) undecided(w http.ResponseWriter, r *http.Request, next http.Handler, err error) {
	m.report(r, err)
	if m.cfg.failMode == FailOpen {
		next.ServeHTTP(w, r)
		return
	}
	unavailable(w)
}

// report passes a limiter error to WithErrorHandler's function.
func (m *Middleware) report(r *http.Request, err error) {
	if m.cfg.onError != nil {
		m.cfg.onError(r, err)
	}
}

// unavailable writes 503 Service Unavailable.
func unavailable(w http.ResponseWriter) {
	http.Error(w, "503 service unavailable: rate limiter unavailable", http.StatusServiceUnavailable)
}

// tooManyRequests is the default denied handler.
func tooManyRequests(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, "429 too many requests", http.StatusTooManyRequests)
}
