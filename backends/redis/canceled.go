package redis

import (
	"context"
	"errors"
)

// CanceledError is the error of a call whose caller's context was
// cancelled (an HTTP client that hung up, an RPC given up) before Redis
// answered; when it was cancelled before the call, nothing was sent. The
// caller left, which says nothing of Redis' health: it matches
// context.Canceled (it unwraps to the context's error) and not
// core.ErrUnavailable, and no decision comes with it (the zero Decision:
// no fail-mode decision stands for a store that did not fail). A deadline
// that passes while Redis does not answer is still a
// *core.UnavailableError.
type CanceledError struct {
	Op  string // what was being done, e.g. "redis evalsha"
	Err error  // the context's error, context.Canceled
}

// Error describes the operation and says the caller left.
func (e *CanceledError) Error() string {
	return "edgelimit: " + e.Op + ": caller gone: " + e.Err.Error()
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
