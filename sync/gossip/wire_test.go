package gossip

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sample() Message {
	return Message{PoP: "fra#0a1b2c3d", SentAt: time.UnixMilli(1_700_000_000_123), WindowMillis: 60000,
		Entries: []Entry{{"user:1", 28333333, 7}, {"user:{2}", 28333332, 100}, {"\x00ip", 28333333, 1}}}
}

func TestRoundTripSample(t *testing.T) {
	b, err := Marshal(sample())
	require.NoError(t, err)
	got, err := Decode(b)
	require.NoError(t, err)
	require.Equal(t, sample(), got, "round trip:\n got %+v\nwant %+v", got, sample())
}

// TestRoundTripProperty: for random valid messages, Decode(Encode(m)) gives
// back m's entries in order, split over payloads each within the bound.
func TestRoundTripProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 300; i++ {
		m := randomMessage(r)
		limit := 1024 + r.IntN(8192)
		parts, err := Encode(m, limit)
		require.NoError(t, err, "encode %d", i)
		var all []Entry
		for _, p := range parts {
			require.LessOrEqual(t, len(p), limit, "payload %d bytes over limit %d", len(p), limit)
			d, err := Decode(p)
			require.NoError(t, err, "decode")
			require.Equal(t, m.PoP, d.PoP, "header changed: %+v vs %+v", d, m)
			require.True(t, d.SentAt.Equal(m.SentAt), "header changed: %+v vs %+v", d, m)
			require.Equal(t, m.WindowMillis, d.WindowMillis, "header changed: %+v vs %+v", d, m)
			all = append(all, d.Entries...)
		}
		if len(m.Entries) == 0 && len(all) == 0 {
			continue
		}
		require.Equal(t, m.Entries, all, "entries differ after round trip")
	}
}

func randomMessage(r *rand.Rand) Message {
	m := Message{PoP: randString(r, 1+r.IntN(MaxSenderLen)), WindowMillis: 1 + r.Int64N(1<<40),
		SentAt: time.UnixMilli(r.Int64N(1<<45) - 1<<44)}
	base := r.Int64N(1<<50) - 1<<49
	for j := r.IntN(200); j > 0; j-- {
		m.Entries = append(m.Entries, Entry{Key: randString(r, 1+r.IntN(core.MaxKeyLen)),
			Window: base + r.Int64N(3), Count: 1 + r.Int64N(MaxCount)})
	}
	return m
}

func randString(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return string(b)
}

func TestEncodeRejectsInvalid(t *testing.T) {
	bad := []Message{
		{PoP: "", WindowMillis: 1},
		{PoP: strings.Repeat("p", MaxSenderLen+1), WindowMillis: 1},
		{PoP: "p", WindowMillis: 0},
		{PoP: "p", WindowMillis: 1, Entries: []Entry{{Key: "", Window: 1, Count: 1}}},
		{PoP: "p", WindowMillis: 1, Entries: []Entry{{Key: "k", Window: 1, Count: 0}}},
		{PoP: "p", WindowMillis: 1, Entries: []Entry{{Key: strings.Repeat("k", core.MaxKeyLen+1), Window: 1, Count: 1}}},
	}
	for i, m := range bad {
		_, err := Encode(m, 4096)
		assert.ErrorIs(t, err, core.ErrMalformed, "case %d: err %v, want ErrMalformed", i, err)
	}
}

func TestDecodeRejects(t *testing.T) {
	good, _ := Marshal(sample())
	cases := map[string]struct {
		in   []byte
		want error
	}{
		"empty":       {nil, ErrTruncated},
		"one byte":    {good[:1], ErrTruncated},
		"bad magic":   {append([]byte{0x00}, good[1:]...), ErrVersion},
		"version 2":   {append([]byte{magic, 2}, good[2:]...), ErrVersion},
		"trailing":    {append(bytes.Clone(good), 0), ErrBadField},
		"oversized":   {append(bytes.Clone(good), make([]byte, MaxMessageBytes)...), ErrTooLarge},
		"huge count":  {hdr(1 << 40), ErrBadField},
		"many count":  {hdr(1000), ErrTruncated},
		"zero count":  {entryBytes(0), ErrBadField},
		"count > max": {entryBytes(MaxCount + 1), ErrBadField},
	}
	for i := 2; i < len(good); i++ {
		cases["truncated at "+string(rune('a'+i%26))+strings.Repeat("'", i/26)] = struct {
			in   []byte
			want error
		}{good[:i], nil}
	}
	for name, c := range cases {
		m, err := Decode(c.in)
		if assert.ErrorIs(t, err, core.ErrMalformed, "%s: err %v, want %v", name, err, c.want) {
			if c.want != nil {
				assert.ErrorIs(t, err, c.want, "%s: err %v, want %v", name, err, c.want)
			}
		}
		if assert.Equal(t, "", m.PoP, "%s: partial message returned: %+v", name, m) {
			assert.Nil(t, m.Entries, "%s: partial message returned: %+v", name, m)
		}
	}
}

func hdr(n uint64) []byte {
	m := Message{PoP: "p", WindowMillis: 1000}
	return appendHeader(nil, &m, 5, int(n))
}

func entryBytes(count uint64) []byte {
	b := hdr(1)
	b = append(b, 1, 'k', 0)
	b = appendUvarint(b, count)
	return b
}

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func TestSubjectHasNoIdentity(t *testing.T) {
	got := Subject("el")
	require.Equal(t, "el.edgelimit.gossip.v1", got, "Subject = %q", got)
}

func FuzzDecode(f *testing.F) {
	good, _ := Marshal(sample())
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{magic, Version})
	f.Add([]byte{magic, 9, 1, 'p'})
	f.Add(hdr(3))
	f.Add(entryBytes(5))
	f.Add(wrappingWindow())
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			require.ErrorIs(t, err, core.ErrMalformed, "bad failure: %v %+v", err, m)
			require.Equal(t, "", m.PoP, "bad failure: %v %+v", err, m)
			require.Nil(t, m.Entries, "bad failure: %v %+v", err, m)
			return
		}
		again, err := Marshal(m)
		require.NoError(t, err, "decoded message does not re-encode")
		m2, err := Decode(again)
		require.NoError(t, err, "re-decode differs")
		require.Equal(t, m2, m, "re-decode differs: %v", err)
	})
}
