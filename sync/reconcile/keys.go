package reconcile

import (
	"encoding/hex"
	"strconv"
	"strings"
)

// Key is the Redis key of identity's hash for window index idx in namespace
// ns: "ns:{k:identity}:idx". An identity holding '}' would end the hash tag
// early, so it is hex-encoded instead: "ns:{x:hex}:idx". Distinct
// (identity, idx) pairs always give distinct keys, and every key of one
// identity has the same hash tag. ns must hold no '{' or '}'.
func Key(ns, identity string, idx int64) string {
	var b strings.Builder
	b.Grow(len(ns) + 2*len(identity) + 28)
	b.WriteString(ns)
	if strings.IndexByte(identity, '}') < 0 {
		b.WriteString(":{k:")
		b.WriteString(identity)
	} else {
		b.WriteString(":{x:")
		b.WriteString(hex.EncodeToString([]byte(identity)))
	}
	b.WriteString("}:")
	b.WriteString(strconv.FormatInt(idx, 10))
	return b.String()
}
