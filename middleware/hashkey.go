package middleware

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
)

// HashedKeyLen is the length of every key HashedKey returns: 32 hex digits,
// the first 128 bits of a SHA-256.
const HashedKeyLen = 32

// HashedKey returns a KeyFunc that hashes f's key: the first 16 bytes of
// its SHA-256, in lower-case hex (HashedKeyLen characters). Use it when the
// key is a secret, such as an API key, so the secret never becomes a Redis
// key name, a gossip message or a log line:
//
//	middleware.WithKeyFunc(middleware.HashedKey(middleware.HeaderKey("X-API-Key")))
//
// An empty key stays empty, so a missing key is still a bad key
// (WithBadKeyHandler, WithFallbackKey); a key of any length hashes to
// HashedKeyLen characters, so an over-long one is accepted. 128 bits make a
// collision (two identities sharing a quota) as unlikely as guessing a
// random 128-bit key. The hash is unkeyed: it hides secrets of high entropy
// (generated API keys), not guessable ones such as passwords or e-mail
// addresses, which anyone can hash and compare.
func HashedKey(f KeyFunc) KeyFunc {
	return func(r *http.Request) string {
		k := f(r)
		if k == "" {
			return ""
		}
		sum := sha256.Sum256([]byte(k))
		return hex.EncodeToString(sum[:HashedKeyLen/2])
	}
}
