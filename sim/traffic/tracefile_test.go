package traffic

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readOpts reads against small's sizes.
func readOpts() ReadOptions {
	c := small("mixed")
	return ReadOptions{PoPs: c.PoPs, Limit: c.Limit, Window: c.Window}
}

func TestWriteThenReadIsTheSameTrace(t *testing.T) {
	for _, f := range []Format{CSV, JSONL} {
		for _, s := range Scenarios {
			c := small(s)
			c.Rate = 77                    // a duration that is not a whole number of milliseconds
			c.Seed = 1<<64 - 1 - uint64(f) // the largest seeds survive the header
			tr, err := Generate(c)
			require.NoError(t, err, "%s %s: generating", f, s)
			var buf bytes.Buffer
			require.NoError(t, WriteTrace(&buf, tr, f, "scenario "+s+"\nseed 7"), "%s %s: writing", f, s)
			o := readOpts()
			o.PoPs = 99 // the header's pops win
			got, err := ReadTrace(&buf, f, o)
			require.NoError(t, err, "%s %s: reading back", f, s)
			require.True(t, reflect.DeepEqual(got.Requests, tr.Requests), "%s %s: read back different requests", f, s)
			assert.Equal(t, tr.Duration, got.Duration, "%s %s: duration read back", f, s)
			assert.Equal(t, c.PoPs, got.Config.PoPs, "%s %s: PoPs read back", f, s)
			assert.Equal(t, c.Requests, got.Config.Requests, "%s %s: requests read back", f, s)
			assert.Equal(t, c.Identities, got.Config.Identities, "%s %s: identities read back", f, s)
			assert.True(t, got.Seeded, "%s %s: the written trace records its seed", f, s)
			assert.Equal(t, c.Seed, got.Config.Seed, "%s %s: seed read back", f, s)
			require.GreaterOrEqual(t, len(got.Classes), len(tr.Classes), "%s %s: classes read back", f, s)
			assert.Equal(t, tr.Classes, got.Classes[:len(tr.Classes)], "%s %s: the generated classes come first", f, s)
			for _, r := range tr.Requests {
				require.Equal(t, tr.ClassOf[r.ID], got.ClassOf[r.ID], "%s %s: identity %d's class", f, s, r.ID)
			}
		}
	}
}

// TestUnseededTraceWritesNoSeed: a trace read from a file without a seed
// is written without one, and read back unseeded.
func TestUnseededTraceWritesNoSeed(t *testing.T) {
	for _, f := range []Format{CSV, JSONL} {
		tr, err := Generate(small("mixed"))
		require.NoError(t, err)
		tr.Seeded = false
		var buf bytes.Buffer
		require.NoError(t, WriteTrace(&buf, tr, f, ""))
		assert.NotContains(t, buf.String(), "seed", "%s: an unseeded trace's header names no seed", f)
		got, err := ReadTrace(&buf, f, readOpts())
		require.NoError(t, err, "%s: reading back", f)
		assert.False(t, got.Seeded, "%s: read back unseeded", f)
	}
}

func TestMsDecimalsAreExact(t *testing.T) {
	for _, d := range []time.Duration{0, 1, 999, time.Millisecond, 1234567891, 60 * time.Second} {
		s := appendMs(nil, d)
		got, err := parseMs(s)
		assert.False(t, err != nil || got != d, "%d ns written %s read %d, %v", d, s, got, err)
	}
	got, _ := parseMs([]byte("1.23456789"))
	assert.EqualValues(t, 1234567, got, "1.23456789 ms read %d ns, want 1234567", got)
}

func TestReadNamedPoPsQuotesAndDefaults(t *testing.T) {
	file := "# edgelimit-trace v1\r\n# from an nginx log\n# pops: fra, iad,sin\n" +
		"t_ms,identity,pop,weight\n\n0,\"2001:db8::1\",fra,1\n0.5,\"a,b\",2,3\n# a comment\n7,10.0.0.1,iad,1\n"
	tr, err := ReadTrace(strings.NewReader(file), CSV, readOpts())
	require.NoError(t, err)
	want := []Request{{0, 0, 0, 1}, {500 * time.Microsecond, 1, 2, 3}, {7 * time.Millisecond, 2, 1, 1}}
	require.False(t, !reflect.DeepEqual(tr.Requests, want) || tr.Config.PoPs != 3 || tr.Config.Identities != 3 ||
		tr.Duration != 8*time.Millisecond || tr.Classes != nil || tr.Config.Scenario != "trace",
		"got %+v, duration %s, config %+v", tr.Requests, tr.Duration, tr.Config)
	jsonl := `{"edgelimit_trace":"v1","pops":["fra","iad"],"recorded_by":"a later v1 key"}` + "\n" +
		`{"t_ms":1,"identity":"k","pop":"iad","weight":2,"class":"api"}` + "\n" +
		`{"t_ms":2,"identity":"k","pop":0,"weight":1}` + "\n" +
		`{"t_ms":2,"identity":"j","pop":0,"weight":1}`
	tr, err = ReadTrace(strings.NewReader(jsonl), JSONL, readOpts())
	require.NoError(t, err)
	want = []Request{{time.Millisecond, 0, 1, 2}, {2 * time.Millisecond, 0, 0, 1}, {2 * time.Millisecond, 1, 0, 1}}
	require.False(t, !reflect.DeepEqual(tr.Requests, want) || tr.Config.PoPs != 2 ||
		!reflect.DeepEqual(tr.Classes, []string{"api", "unclassified"}) || !reflect.DeepEqual(tr.ClassOf, []uint8{0, 1}),
		"got %+v, config %+v, classes %v", tr.Requests, tr.Config, tr.Classes)
}
