package core

import "errors"

// ErrInvalid is matched (errors.Is) by every error about bad input: an empty
// or oversized key, a non-positive limit or window, a weight out of range, a
// request time before the Unix epoch or past MaxMillis, or a malformed message. Such calls
// change no state anywhere.
var ErrInvalid = errors.New("edgelimit: invalid input")

// ErrUnavailable is matched by errors caused by a store or transport that
// cannot be reached (Redis down, NATS down, timeouts). Whether a decision is
// still made in that case is each limiter's documented fail mode.
var ErrUnavailable = errors.New("edgelimit: store unavailable")

// ErrClosed is returned by every decision of a limiter after its Close: a
// closed limiter admits nothing, since what it admitted would never be
// counted where the other nodes can see it. Stop serving first, then Close.
var ErrClosed = errors.New("edgelimit: limiter closed")

// InputError is a typed error for bad input. It matches ErrInvalid and its
// own sentinel with errors.Is.
type InputError struct{ msg string }

// Error returns the message, prefixed with "edgelimit: ".
func (e *InputError) Error() string { return "edgelimit: " + e.msg }

// Is reports whether target is ErrInvalid, so callers can test for any bad
// input at once.
func (e *InputError) Is(target error) bool { return target == ErrInvalid }

// The sentinels for each kind of bad input. Each matches ErrInvalid too.
var (
	ErrEmptyKey     = &InputError{"empty key"}
	ErrKeyTooLong   = &InputError{"key longer than MaxKeyLen bytes"}
	ErrBadLimit     = &InputError{"limit must be between 1 and MaxLimit"}
	ErrBadWindow    = &InputError{"window must be a whole number of milliseconds between 1ms and MaxWindow"}
	ErrBadWeight    = &InputError{"weight must be between 1 and the limit"}
	ErrBadAlgorithm = &InputError{"unknown algorithm"}
	ErrMalformed    = &InputError{"malformed message"}
	ErrBadTime      = &InputError{"time before the Unix epoch (1970-01-01 UTC) or past core.MaxMillis (2155)"}
)

// ErrNotClusterClient is matched (errors.Is) by the errors of a call that a
// Redis Cluster node redirected (MOVED or ASK) while the client does not
// follow redirections: a plain client pointed at one node of a cluster, a
// configuration error that changes no state. It matches ErrInvalid too.
// Returned by backends/redis (its *RedirectError and CheckClient) and
// sync/budget (its *RedirectError and CheckClient), whose
// ErrNotClusterClient is this same value.
var ErrNotClusterClient = &InputError{"a Redis Cluster node redirected the call, but the client does not follow redirections (use a *goredis.ClusterClient)"}

// UnavailableError wraps the cause of an unreachable store; it matches
// ErrUnavailable with errors.Is and unwraps to the cause.
type UnavailableError struct {
	Op  string // what was being done, e.g. "redis evalsha"
	Err error  // the underlying error
}

// Error describes the operation and its cause.
func (e *UnavailableError) Error() string {
	return "edgelimit: " + e.Op + ": store unavailable: " + e.Err.Error()
}

// Is reports whether target is ErrUnavailable.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Unwrap returns the cause.
func (e *UnavailableError) Unwrap() error { return e.Err }
