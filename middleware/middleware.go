package middleware

import (
	"errors"
	"fmt"
	"net/http"

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
	return &Middleware{cfg: cfg, policy: policyField(cfg.limits)}, nil
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
	key, ok := m.key(r)
	if !ok {
		http.Error(w, "400 bad request: no rate-limit key in the request", http.StatusBadRequest)
		return
	}
	o, err := m.decideWithin(r.Context(), key, m.cfg.clock.Now())
	if err != nil {
		m.fail(w, r, next, err)
		return
	}
	i := o.pick()
	if i < 0 { // no limit answered: cannot happen without an error
		m.fail(w, r, next, &core.UnavailableError{Op: "middleware: rate-limit decision", Err: errNoAnswer})
		return
	}
	writeDecided(h, m.cfg.limits[i].name, o.ds[i], o.denied, m.cfg.legacy)
	if o.denied {
		m.cfg.denied.ServeHTTP(w, r)
		return
	}
	next.ServeHTTP(w, r)
}

// key extracts the request's key, replacing a bad one by the fallback key
// when configured.
func (m *Middleware) key(r *http.Request) (string, bool) {
	k := m.cfg.key(r)
	if core.ValidateKey(k) == nil {
		return k, true
	}
	return m.cfg.fallback, m.cfg.fallback != ""
}

// fail applies the fail mode to a request whose decision failed.
func (m *Middleware) fail(w http.ResponseWriter, r *http.Request, next http.Handler, err error) {
	if m.cfg.onError != nil {
		m.cfg.onError(r, err)
	}
	if m.cfg.failMode == FailClosed {
		http.Error(w, "503 service unavailable: rate limiter unavailable", http.StatusServiceUnavailable)
		return
	}
	next.ServeHTTP(w, r)
}

// tooManyRequests is the default denied handler.
func tooManyRequests(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, "429 too many requests", http.StatusTooManyRequests)
}
