package middleware

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/edgelimit/edgelimit/core"
)

// BadKeyHandler writes the response to a request whose key is bad; err is
// core.ErrEmptyKey (the KeyFunc found no key: a missing or blank header, a
// RemoteAddr with no IP) or core.ErrKeyTooLong (longer than core.MaxKeyLen),
// tell them apart with errors.Is. The RateLimit-Policy field is already
// set when it runs; nothing was counted.
type BadKeyHandler func(w http.ResponseWriter, r *http.Request, err error)

// WithBadKeyHandler sets how a request with a bad key is answered (default
// DefaultBadKey: 400 Bad Request, with a message saying which). An API that
// wants 401 Unauthorized for a missing key writes it here. It is not called
// under WithFallbackKey, which counts such requests instead. A nil h is an
// error matching core.ErrInvalid.
func WithBadKeyHandler(h BadKeyHandler) Option {
	return func(c *config) error {
		if h == nil {
			return fmt.Errorf("%w: nil bad-key handler", core.ErrInvalid)
		}
		c.badKey = h
		return nil
	}
}

// DefaultBadKey is the default BadKeyHandler: 400 Bad Request, with the body
// "no rate-limit key in the request" for a missing key and "rate-limit key
// longer than 512 bytes" (core.MaxKeyLen) for an over-long one.
func DefaultBadKey(w http.ResponseWriter, _ *http.Request, err error) {
	msg := "400 bad request: no rate-limit key in the request"
	if errors.Is(err, core.ErrKeyTooLong) {
		msg = fmt.Sprintf("400 bad request: rate-limit key longer than %d bytes", core.MaxKeyLen)
	}
	http.Error(w, msg, http.StatusBadRequest)
}
