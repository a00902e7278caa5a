package budget

import (
	"context"
	"errors"

	"github.com/edgelimit/edgelimit/core"
)

// CanceledError is the error of a Limiter call whose caller's context was
// cancelled (an HTTP client that hung up, an RPC given up) before Redis
// answered; when it was cancelled before the call, nothing was sent. The
// caller left, which says nothing of Redis' health: it matches
// context.Canceled (it unwraps to the context's error) and not
// core.ErrUnavailable, no decision comes with it (the zero Decision: no
// decision on the view stands for a Redis that did not fail), and the
// Limiter is not put down. A deadline that passes while Redis does not
// answer is still a *core.UnavailableError. Machine.Complete and
// Machine.Finish take it as the outcome of a Call whose caller left.
type CanceledError struct {
	Op  string // what was being done, e.g. "budget script"
	Err error  // the context's error, context.Canceled
}

// Error describes the operation and says the caller left.
func (e *CanceledError) Error() string {
	return "budget: " + e.Op + ": caller gone: " + e.Err.Error()
}

// Unwrap returns the context's error.
func (e *CanceledError) Unwrap() error { return e.Err }

// canceled returns a *CanceledError when ctx, the caller's context, was
// cancelled, else nil.
func canceled(ctx context.Context, op string) error {
	if err := ctx.Err(); errors.Is(err, context.Canceled) {
		return &CanceledError{Op: op, Err: err}
	}
	return nil
}

// ended returns, when ctx, the caller's context, has ended, the error of
// operation op that sends nothing: a *CanceledError when it was
// cancelled, a *core.UnavailableError wrapping its error when its
// deadline passed (Redis did not fail: the Limiter is not put down);
// else nil.
func ended(ctx context.Context, op string) error {
	if err := canceled(ctx, op); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return &core.UnavailableError{Op: op, Err: err}
	}
	return nil
}

// left reports whether err is a *CanceledError: the caller left, Redis
// did not fail.
func left(err error) bool {
	var ce *CanceledError
	return errors.As(err, &ce)
}
