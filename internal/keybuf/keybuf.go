// Package keybuf stores a short key inside the record it names, so that a
// map keyed by that string compares a request's key against bytes in the
// record the caller reads next, instead of in an allocation of their own:
// on a large key set, one cache miss fewer per lookup. backends/local's
// slots embed a Buf.
package keybuf

import (
	"strings"
	"unsafe"
)

// Inline is the longest key a Buf holds. With a 32-byte state a slot is
// then 64 bytes, one allocation size class.
const Inline = 32

// Buf is room for a key of up to Inline bytes inside a record. Its zero
// value is empty; Own fills it once.
type Buf [Inline]byte

// Own returns the record's own copy of key: a string over b when key fits
// (it then points into the record that holds b, which keeps the record
// alive), else a clone. Either way the result never shares, or is changed
// by, the caller's buffer. Own must be called at most once per Buf, before
// the string is published: the string is immutable only while b is never
// written again.
func (b *Buf) Own(key string) string {
	if len(key) > Inline {
		return strings.Clone(key)
	}
	return unsafe.String(&b[0], copy(b[:], key))
}
