package traffic

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stretchr/testify/assert"
)

// goldenDefault is the SHA-256 of each scenario's trace at DefaultConfig
// (its requests and duration), taken before -rate existed (near-limit's
// when it was added): the default run's figures depend on these traces
// staying bit-identical. A new scenario adds its hash here.
var goldenDefault = map[string]string{
	"mixed":         "6c6ac73e7ad676f92bb6edcc489020eb5b4d80407f9393d5c2c0a54f8f072951",
	"spread-attack": "9406990fb90736a3a59e7f88a9bd67c08b0a32ec3436347ba9be710ce23bc5ba",
	"pinned":        "edaa1e472d6408e39e030d4ec4c4cab7b9f7eb867d10cef5df8a9529d7a7a21d",
	"flash-crowd":   "790fb766ccb4e1612a8db7c663ae8c1611a9fef5c9c8ed30831c0e95af38a097",
	"near-limit":    "78dfaf356d2d6696a895d2db456e5743b7a5b8d9d5f7281e734481e705b056af",
	"edge":          "7d58586110449bde6429b079fd290bfc0f2c19e322135d92449652c5855a3d8f",
}

// traceHash hashes tr's duration and every request's fields in order.
func traceHash(tr *Trace) string {
	h := sha256.New()
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(tr.Duration))
	h.Write(b[:8])
	for _, r := range tr.Requests {
		binary.LittleEndian.PutUint64(b[0:], uint64(r.At))
		binary.LittleEndian.PutUint32(b[8:], uint32(r.ID))
		binary.LittleEndian.PutUint16(b[12:], uint16(r.PoP))
		binary.LittleEndian.PutUint16(b[14:], uint16(r.N))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestDefaultTracesBitIdentical(t *testing.T) {
	for _, s := range Scenarios {
		c := DefaultConfig()
		c.Scenario = s
		tr, err := Generate(c)
		require.NoError(t, err)
		want, ok := goldenDefault[s]
		got := traceHash(tr)
		assert.False(t, !ok || got != want, "%s: default trace hash %s, want %q (a new scenario adds its hash to goldenDefault)", s, got, want)
	}
}
