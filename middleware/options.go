package middleware

import (
	"fmt"
	"net/http"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// DefaultTimeout bounds a request's whole rate-limit decision when
// WithTimeout is not given.
const DefaultTimeout = 100 * time.Millisecond

// Option configures a Middleware; pass options to New.
type Option func(*config) error

// namedLimit is one limit of the route.
type namedLimit struct {
	name    string
	limiter core.Limiter
}

type config struct {
	limits    []namedLimit
	key       KeyFunc
	fallback  string
	failMode  FailMode
	timeout   time.Duration
	inline    bool
	legacy    bool
	peekFirst bool
	clock     core.Clock
	denied    http.Handler
	badKey    BadKeyHandler
	onError   func(*http.Request, error)
}

func defaultConfig() config {
	return config{
		key:       RemoteAddrKey,
		timeout:   DefaultTimeout,
		peekFirst: true,
		clock:     core.SystemClock{},
		denied:    http.HandlerFunc(tooManyRequests),
		badKey:    DefaultBadKey,
	}
}

// WithLimit adds a limit named name, enforced by l. Call it once per limit;
// at least one is required and every one must allow a request. name appears
// in the RateLimit fields, so it must be non-empty, printable ASCII and
// unique; otherwise New returns an error matching core.ErrInvalid, as it does
// for a nil l.
func WithLimit(name string, l core.Limiter) Option {
	return func(c *config) error {
		if err := checkName(name, c.limits); err != nil {
			return err
		}
		if l == nil {
			return fmt.Errorf("%w: limit %q has a nil limiter", core.ErrInvalid, name)
		}
		c.limits = append(c.limits, namedLimit{name, l})
		return nil
	}
}

// WithKeyFunc sets how a request becomes an identity key (default
// RemoteAddrKey). A nil f is an error matching core.ErrInvalid.
func WithKeyFunc(f KeyFunc) Option {
	return func(c *config) error {
		if f == nil {
			return fmt.Errorf("%w: nil key func", core.ErrInvalid)
		}
		c.key = f
		return nil
	}
}

// WithFallbackKey counts requests with a bad key (empty, or longer than
// core.MaxKeyLen) under key instead of refusing them (WithBadKeyHandler;
// default 400 Bad Request). All such requests then share one quota. key must itself be a
// valid key (core.ValidateKey), or New returns its error.
func WithFallbackKey(key string) Option {
	return func(c *config) error {
		if err := core.ValidateKey(key); err != nil {
			return fmt.Errorf("fallback key: %w", err)
		}
		c.fallback = key
		return nil
	}
}

// WithFailMode sets whether the middleware overrides a limiter's decision
// when its store fails, and what a request with no decision gets (default
// FailAsLimiter: the limiter's decision stands; see FailMode). An unknown
// mode is an error matching core.ErrInvalid.
func WithFailMode(m FailMode) Option {
	return func(c *config) error {
		if m > FailClosed {
			return fmt.Errorf("%w: fail mode %d", core.ErrInvalid, m)
		}
		c.failMode = m
		return nil
	}
}

// WithTimeout bounds a request's whole decision, all limits together, to d
// (default DefaultTimeout); past it the fail mode applies. Zero means no
// bound other than the request's own context. A negative d is an error
// matching core.ErrInvalid.
func WithTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("%w: negative timeout", core.ErrInvalid)
		}
		c.timeout = d
		return nil
	}
}

// WithTrustedDeadline makes the middleware call the limiters on the
// request's goroutine, trusting them to return by the context deadline
// WithTimeout sets, instead of running the decision on a goroutine of its
// own and abandoning it at the deadline (the default). It saves a goroutine
// and a channel per request (a few µs; see BenchmarkMiddleware) but gives up
// the guarantee against limiters that ignore their context. In-process
// limiters (backends/local) never block; a go-redis client honours context
// deadlines only with Options.ContextTimeoutEnabled set, and otherwise waits
// up to its read timeout on a Redis that accepts connections but does not
// answer.
func WithTrustedDeadline() Option {
	return func(c *config) error { c.inline = true; return nil }
}

// WithLegacyHeaders adds X-RateLimit-Limit, X-RateLimit-Remaining and
// X-RateLimit-Reset to every decided response (default off).
func WithLegacyHeaders() Option {
	return func(c *config) error { c.legacy = true; return nil }
}

// WithPeekFirst turns the peek before spending on or off (default on); see
// the package documentation. It matters only with two limits or more.
func WithPeekFirst(on bool) Option {
	return func(c *config) error { c.peekFirst = on; return nil }
}

// WithClock sets the clock that gives each decision its time (default
// core.SystemClock). A nil clock is an error matching core.ErrInvalid.
func WithClock(clk core.Clock) Option {
	return func(c *config) error {
		if clk == nil {
			return fmt.Errorf("%w: nil clock", core.ErrInvalid)
		}
		c.clock = clk
		return nil
	}
}

// WithDeniedHandler sets the handler that writes a denied response (default:
// status 429 and a one-line text body). The rate-limit fields and
// Retry-After are already set when it runs; it should write status 429. A
// nil h is an error matching core.ErrInvalid.
func WithDeniedHandler(h http.Handler) Option {
	return func(c *config) error {
		if h == nil {
			return fmt.Errorf("%w: nil denied handler", core.ErrInvalid)
		}
		c.denied = h
		return nil
	}
}

// WithErrorHandler sets a function called with every limiter error and
// timeout, once per request, before the response is written; use it to log.
// A store failure matches core.ErrUnavailable (whether or not the limiter's
// decision came with it, see FailMode); a client that hung up before its
// decision (the request's context cancelled) gives an error matching
// context.Canceled and not core.ErrUnavailable, which is no store failure
// (the middleware's, backends/redis' and sync/budget's); other errors are
// the limiter's own.
// Default: none. It runs on the request's goroutine and must not write the
// response.
func WithErrorHandler(f func(r *http.Request, err error)) Option {
	return func(c *config) error { c.onError = f; return nil }
}

// checkName refuses names that cannot be an RFC 8941 String or that repeat.
func checkName(name string, have []namedLimit) error {
	if name == "" {
		return fmt.Errorf("%w: empty limit name", core.ErrInvalid)
	}
	for i := 0; i < len(name); i++ {
		if name[i] < 0x20 || name[i] > 0x7e {
			return fmt.Errorf("%w: limit name %q is not printable ASCII", core.ErrInvalid, name)
		}
	}
	for _, l := range have {
		if l.name == name {
			return fmt.Errorf("%w: limit name %q given twice", core.ErrInvalid, name)
		}
	}
	return nil
}
